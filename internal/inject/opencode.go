package inject

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"nudge/internal/proc"
	"nudge/internal/watch/opencode"
)

// OpenCode continues an OpenCode session through the HTTP server of the
// process that owns it (formats/opencode.md §8): it sends only while the
// session is idle with no prompt open, as a JSON body, so the text reaches
// OpenCode literally. A process without a server (a plain TUI) is not
// located here; a terminal backend can still type into it.
type OpenCode struct {
	client *http.Client
}

func init() {
	register(registration{
		name: "opencode", rank: rankServer,
		// Locate refuses every session whose process runs no server.
		available: func(Options) bool { return true },
		build:     func(Options) Backend { return NewOpenCode() },
	})
}

// NewOpenCode returns the OpenCode backend.
func NewOpenCode() *OpenCode {
	return &OpenCode{client: &http.Client{Transport: &http.Transport{Proxy: nil}}}
}

// Name is "opencode".
func (*OpenCode) Name() string { return "opencode" }

// Locate finds the server of the OpenCode process t.PID from its command
// line (`serve`, `--port N`, §2.4).
func (o *OpenCode) Locate(ctx context.Context, t Target) (Where, error) {
	if t.Agent != "opencode" {
		return Where{}, refuse(ErrNotInTerminal, "%s is not an OpenCode session", t.Agent)
	}
	if t.PID == 0 || t.Session == "" {
		return Where{}, refuse(ErrNotInTerminal, "no OpenCode process with a server is known for the session")
	}
	p, err := readProcess(t.PID)
	if err != nil {
		return Where{}, err
	}
	argv, err := proc.Args(t.PID)
	if err != nil {
		return Where{}, processError(t.PID, err)
	}
	addr, ok := opencode.ServerAddr(argv)
	if !ok {
		return Where{}, refuse(ErrNotInTerminal, "OpenCode process %d runs no HTTP server on a port its command line names (start it with --port N)", t.PID)
	}
	return Where{Server: "http://" + addr, Pane: t.Session, PID: t.PID, Started: p.Started}, nil
}

// Send re-checks that the process is the same and the session idle with no
// prompt open, then posts the text as a new prompt of the session.
func (o *OpenCode) Send(ctx context.Context, w Where, text string) error {
	if _, err := sameRun(w, "OpenCode session "+w.Pane); err != nil {
		return err
	}
	var statuses map[string]struct {
		Type string `json:"type"`
	}
	if err := o.get(ctx, w, "/session/status", &statuses); err != nil {
		return err
	}
	if st, busy := statuses[w.Pane]; busy {
		// busy, or retrying by itself: a prompt sent during a retry is
		// stored but not acted on (§8).
		return refuse(ErrNotIdle, "OpenCode session %s is %s", w.Pane, st.Type)
	}
	for _, box := range []string{"permission", "question"} {
		var open []struct {
			SessionID string `json:"sessionID"`
		}
		if err := o.get(ctx, w, "/"+box, &open); err != nil {
			return err
		}
		for _, b := range open {
			if b.SessionID == w.Pane {
				return refuse(ErrNotIdle, "a %s prompt is open in OpenCode session %s", box, w.Pane)
			}
		}
	}
	body, err := json.Marshal(map[string]any{"parts": []map[string]string{{"type": "text", "text": text}}})
	if err != nil {
		return fmt.Errorf("encode prompt: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.Server+"/session/"+url.PathEscape(w.Pane)+"/prompt_async", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("prompt request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.client.Do(req)
	if err != nil {
		return fmt.Errorf("post prompt to %s: %w", w.Server, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("post prompt to %s: HTTP %d: %s", w.Server, resp.StatusCode, bytes.TrimSpace(msg))
	}
	return nil
}

// get reads one JSON answer of the server.
func (o *OpenCode) get(ctx context.Context, w Where, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.Server+path, nil)
	if err != nil {
		return fmt.Errorf("request %s: %w", path, err)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return fmt.Errorf("ask OpenCode %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ask OpenCode %s: HTTP %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(v); err != nil {
		return fmt.Errorf("read OpenCode %s: %w", path, err)
	}
	return nil
}
