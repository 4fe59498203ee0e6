package security

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/samples"
)

// TestFIFOInAnAgentsFolderNeverStopsTheDaemon: the legacy Kimi CLI's log,
// which nudge reads to learn why a turn failed, is a FIFO that no one
// writes to. The failed turn is still told (its cause unknown), and so is
// a Claude Code sign-in failure written after it: nothing waits on the
// FIFO.
func TestFIFOInAnAgentsFolderNeverStopsTheDaemon(t *testing.T) {
	w := newWorld(t, "NUDGE_RETRY_ENABLED=false")
	root := samples.Dir("kimi-legacy", "constructed-provider-error", ".kimi")
	kimi := filepath.Join(w.home, ".kimi")
	must(t, os.MkdirAll(filepath.Join(kimi, "logs"), 0o700))
	must(t, syscall.Mkfifo(filepath.Join(kimi, "logs", "kimi.log"), 0o600))
	data, err := os.ReadFile(filepath.Join(root, "kimi.json"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(kimi, "kimi.json"), data, 0o600))
	w.start()

	wires, err := filepath.Glob(filepath.Join(root, "sessions", "*", "*", "wire.jsonl"))
	if err != nil || len(wires) != 1 {
		t.Fatalf("sample wire files: %v, %v", wires, err)
	}
	rel, err := filepath.Rel(root, wires[0])
	must(t, err)
	data, err = os.ReadFile(wires[0])
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(filepath.Join(kimi, rel)), 0o700))
	must(t, os.WriteFile(filepath.Join(kimi, rel), data, 0o600))
	w.signInFailure("6f2d0b4c-aaaa-4aaa-8aaa-888888888888", "/work/shop", "API Error: 401 Invalid API key")

	agents := func() map[string]bool {
		seen := map[string]bool{}
		for _, e := range w.entries() {
			seen[e.Agent] = true
		}
		return seen
	}
	daemontest.Eventually(t, "an Inbox entry for the Kimi turn and one for the Claude Code turn", 20*time.Second, func() bool {
		seen := agents()
		return seen["kimi"] && seen["claude"]
	})
}
