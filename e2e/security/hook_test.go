package security

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/daemontest"
)

// hookRecord runs `nudge hook grok` for a Stop of session with Grok's
// folder grok, and returns its exit status and standard error.
func (w *world) hookRecord(grok, session string) (int, string) {
	w.t.Helper()
	cfg := filepath.Join(w.home, "config.yaml")
	must(w.t, os.WriteFile(cfg, []byte("agents:\n  grok: {enabled: true, root: "+grok+"}\n"), 0o600))
	// grok-dev gives a hook 20 s; one still running then is a prompt held up.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, daemontest.Bin(daemontest.Nudge), "hook", "grok")
	cmd.Env = append(w.env, "NUDGE_CONFIG="+cfg)
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop","session_id":"` + session + `","cwd":"/work/shop"}`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		w.t.Fatalf("nudge hook grok still running after 20 s: %v", err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestGrokHookFileIsNeverAFIFOOrALink: where `nudge hook grok` appends
// its record lies a FIFO no one reads, a FIFO someone reads, or a link to
// a file of the person's. The hook refuses each at once, saying what to
// remove: no Grok prompt waits for it, nothing is written into the FIFO,
// and the person's file is untouched.
func TestGrokHookFileIsNeverAFIFOOrALink(t *testing.T) {
	w := newWorld(t)
	grok := filepath.Join(w.home, ".grok")
	hooks := filepath.Join(grok, "nudge", "hooks")
	must(t, os.MkdirAll(hooks, 0o700))

	fifo := filepath.Join(hooks, "s1.jsonl")
	must(t, syscall.Mkfifo(fifo, 0o600))
	code, stderr := w.hookRecord(grok, "s1")
	if code == 0 || !strings.Contains(stderr, fifo) || !strings.Contains(stderr, "not a regular file") {
		t.Errorf("hook into a FIFO no one reads: exit status %d: %s", code, stderr)
	}

	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	must(t, err)
	defer reader.Close()
	code, stderr = w.hookRecord(grok, "s1")
	if code == 0 || !strings.Contains(stderr, "not a regular file") {
		t.Errorf("hook into a FIFO someone reads: exit status %d: %s", code, stderr)
	}
	buf := make([]byte, 4096)
	if n, _ := reader.Read(buf); n > 0 {
		t.Errorf("the hook wrote into the FIFO: %q", buf[:n])
	}

	file, unchanged := precious(t)
	link := filepath.Join(hooks, "s2.jsonl")
	must(t, os.Symlink(file, link))
	code, stderr = w.hookRecord(grok, "s2")
	if code == 0 || !strings.Contains(stderr, link) || !strings.Contains(stderr, "symbolic link") {
		t.Errorf("hook through a link: exit status %d: %s", code, stderr)
	}
	unchanged()
}
