package inject

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"nudge/internal/proc"
	"nudge/internal/watch/opencode"
)

// OpenCode continues an OpenCode session through the HTTP server of the
// process that owns it (docs/agents/opencode.md §8): it sends only while the
// session is idle with no prompt open, as a JSON body, so the text reaches
// OpenCode literally. The server is the one the process itself listens on,
// asked with the password of its own environment (opencode.FindServer). A
// process without a server (a plain TUI) is not located here; a terminal
// backend can still type into it.
type OpenCode struct{}

func init() {
	register(registration{
		name: "opencode", rank: rankServer,
		// Locate refuses every session whose process runs no server.
		available: func(Options) bool { return true },
		build:     func(Options) Backend { return NewOpenCode() },
	})
}

// NewOpenCode returns the OpenCode backend.
func NewOpenCode() *OpenCode { return &OpenCode{} }

// Name is "opencode".
func (*OpenCode) Name() string { return "opencode" }

// Locate finds the server of the OpenCode process t.PID.
func (o *OpenCode) Locate(_ context.Context, t Target) (Where, error) {
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
	s, err := openCodeServer(p)
	if err != nil {
		return Where{}, err
	}
	return Where{Server: "http://" + s.Addr, Pane: t.Session, PID: t.PID, Started: p.Started}, nil
}

// openCodeServer finds the server of the OpenCode process p, as a refusal when
// there is none nudge may use.
func openCodeServer(p proc.Process) (opencode.Server, error) {
	s, err := opencode.FindServer(p)
	switch {
	case errors.Is(err, proc.ErrGone), errors.Is(err, proc.ErrNotMine):
		return s, processError(p.PID, err)
	case errors.Is(err, opencode.ErrNoServer):
		return s, refuse(ErrNotInTerminal, "OpenCode process %d runs no HTTP server on loopback (start it with --port)", p.PID)
	case err != nil:
		return s, refuse(ErrNotInTerminal, "%v", err)
	}
	return s, nil
}

// Send re-checks that the process is the same run and still serves where
// it was located, and that the session is idle with no prompt open, then
// posts the text as a new prompt of the session.
func (o *OpenCode) Send(ctx context.Context, w Where, text string) error {
	p, err := sameRun(w, "OpenCode session "+w.Pane)
	if err != nil {
		return err
	}
	s, err := openCodeServer(p)
	if err != nil {
		return err
	}
	if "http://"+s.Addr != w.Server {
		return refuse(ErrOtherProcess, "OpenCode process %d now listens on %s, not %s", w.PID, s.Addr, w.Server)
	}
	var statuses map[string]struct {
		Type string `json:"type"`
	}
	if err := s.Get(ctx, "/session/status", &statuses); err != nil {
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
		if err := s.Get(ctx, "/"+box, &open); err != nil {
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
	resp, err := s.Do(ctx, http.MethodPost, "/session/"+url.PathEscape(w.Pane)+"/prompt_async", bytes.NewReader(body))
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
