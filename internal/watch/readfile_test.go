package watch

import (
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/internal/classify"
	"nudge/internal/testenv"
	"nudge/internal/watch/opencode/opencodetest"
)

// testLog writes to the test's output.
func testLog(t *testing.T) *slog.Logger { return slog.New(slog.NewTextHandler(t.Output(), nil)) }

// A transcript is read at once: its events, a line over the cap skipped and
// logged; a missing file is an error that names it.
func TestReadFileTranscript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "abc.jsonl")
	typed := `{"type":"user","uuid":"u1","timestamp":"2026-03-01T10:00:00Z","sessionId":"abc","message":{"role":"user","content":"fix it"},"promptSource":"typed"}`
	huge := `{"type":"user","message":{"content":"` + strings.Repeat("a", classify.MaxRecordBytes) + `"},"promptSource":"typed"}`
	if err := os.WriteFile(path, []byte(typed+"\n"+huge+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	agent, _ := classify.Lookup("claude")
	events, err := ReadFile(t.Context(), path, agent, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 || events[0].Kind != classify.UserMessage || events[0].Text != "fix it" {
		t.Errorf("events %+v", events)
	}
	if !strings.Contains(logged.String(), "skipped a line over the cap") || !strings.Contains(logged.String(), path) {
		t.Errorf("log %q does not tell the skipped line", logged.String())
	}
	if _, err := ReadFile(t.Context(), filepath.Join(dir, "missing.jsonl"), agent, testLog(t)); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: %v", err)
	}
}

// TestReadFileOpenCodeLive reads a session's live picture from a stand-in
// server, as the daemon does right before sending.
func TestReadFileOpenCodeLive(t *testing.T) {
	var status, perms string
	srv := opencodetest.Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/session/status":
			w.Write([]byte(status))
		case "/permission":
			w.Write([]byte(perms))
		case "/question":
			w.Write([]byte(`[]`))
		default:
			http.NotFound(w, r)
		}
	}), []string{"HOME=" + t.TempDir()})
	agent, _ := classify.Lookup("opencode")
	pid := srv.Cmd.Process.Pid
	path := classify.OpenCodeLivePath(pid, srv.Addr, "ses_dd4478e32ffeWP3grBPEAMzGHG")
	last := func() *classify.Process {
		events, err := ReadFile(t.Context(), path, agent, testLog(t))
		if err != nil {
			t.Fatal(err)
		}
		for i := len(events) - 1; i >= 0; i-- {
			if p := events[i].Process; p != nil {
				return p
			}
		}
		t.Fatalf("no process picture in %+v", events)
		return nil
	}
	status, perms = `{}`, `[]`
	if p := last(); p.Status != "idle" || p.PID != pid {
		t.Errorf("idle session: %+v", p)
	}
	status = `{"ses_dd4478e32ffeWP3grBPEAMzGHG":{"type":"busy"}}`
	perms = `[{"id":"per_22bb8753a0017kCzih6RmiBz5c","sessionID":"ses_dd4478e32ffeWP3grBPEAMzGHG","permission":"bash"}]`
	if p := last(); p.Status != "waiting" {
		t.Errorf("open permission: %+v", p)
	}
	status = `{"ses_dd4478e32ffeWP3grBPEAMzGHG":{"type":"retry","attempt":1,"message":"x","next":1}}`
	perms = `[{"id":"per_1","sessionID":"ses_other","permission":"bash"}]`
	if p := last(); p.Status != "busy" {
		t.Errorf("retrying session: %+v", p)
	}
	// The snapshot's status has no event id: a next attempt hours after
	// now is a quota sleep all the same (docs/agents/opencode.md §6.2).
	next := time.Now().Add(2 * time.Hour).Truncate(time.Millisecond)
	status = `{"ses_dd4478e32ffeWP3grBPEAMzGHG":{"type":"retry","attempt":1,"message":"Rate limited","next":` + strconv.FormatInt(next.UnixMilli(), 10) + `}}`
	events, err := ReadFile(t.Context(), path, agent, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 || events[0].Kind != classify.UsageLimited || !events[0].Failure.ResetAt.Equal(next) {
		t.Errorf("a far retry in the snapshot: %+v, want usage_limited until %v", events, next)
	}
}

// A FIFO under a session file's name (`nudge classify` on one, or a file
// swapped for one between a scan and the read) is refused without waiting
// for a writer that never comes.
func TestReadFileRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abc.jsonl")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	agent, _ := classify.Lookup("claude")
	err := testenv.Returns(t, "ReadFile of a FIFO", func() error {
		_, err := ReadFile(t.Context(), path, agent, testLog(t))
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadFile of a FIFO: %v, want a refusal", err)
	}
}
