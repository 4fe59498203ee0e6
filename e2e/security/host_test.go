package security

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
)

// TestHungMuseHostNeverHoldsUpOtherAgents: the `muse` on the PATH never
// answers its `serve` requests. Three Muse sessions change, each one a
// question for it; a Claude Code sign-in failure written after them is
// told all the same, without waiting for the host. `nudge status` says
// the host does not answer, and the log says it once.
func TestHungMuseHostNeverHoldsUpOtherAgents(t *testing.T) {
	bin := t.TempDir()
	starts := filepath.Join(t.TempDir(), "starts")
	must(t, os.WriteFile(filepath.Join(bin, "muse"), []byte("#!/bin/sh\necho start >> "+starts+"\nexec sleep 600\n"), 0o755))
	w := newWorld(t, "NUDGE_RETRY_ENABLED=false")
	for i, kv := range w.env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			w.env[i] = "PATH=" + bin + string(os.PathListSeparator) + path
		}
	}
	must(t, os.MkdirAll(filepath.Join(w.home, ".muse", "sessions"), 0o700))
	d := w.start()
	for _, s := range []string{"s1", "s2", "s3"} {
		dir := filepath.Join(w.home, ".muse", "sessions", "2026", "12", "04", s)
		must(t, os.MkdirAll(dir, 0o700))
		must(t, os.WriteFile(filepath.Join(dir, "session.jsonl"), []byte(`{"type":"turn"}`+"\n"), 0o600))
	}
	daemontest.Eventually(t, "the host asked", 20*time.Second, func() bool {
		_, err := os.Stat(starts)
		return err == nil
	})
	w.signInFailure("6f2d0b4c-cccc-4ccc-8ccc-888888888888", "/work/shop", "API Error: 401 Invalid API key")
	daemontest.Eventually(t, "an Inbox entry for the Claude Code turn", 20*time.Second, func() bool {
		for _, e := range w.entries() {
			if e.Agent == "claude" {
				return true
			}
		}
		return false
	})
	daemontest.Eventually(t, "nudge status telling of the host", 30*time.Second, func() bool {
		out, err := w.nudge("status")
		return err == nil && strings.Contains(string(out), "muse serve: does not answer")
	})
	if n := strings.Count(d.Log.String(), "muse serve does not answer"); n != 1 {
		t.Errorf("the log tells of the hung host %d times, want once:\n%s", n, d.Log)
	}
}
