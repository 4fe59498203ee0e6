package watch

import (
	"os"
	"path/filepath"
	"testing"

	"nudge/internal/classify"
)

// A host that never answers holds up no other agent: a Claude Code line
// written while the host is being asked is read at once.
func TestHungHostHoldsUpNoOtherAgent(t *testing.T) {
	dir := t.TempDir()
	claude, muse := filepath.Join(dir, "claude"), filepath.Join(dir, "muse")
	mkdir(t, filepath.Join(muse, "sessions"))
	hung := filepath.Join(dir, "muse-hung")
	if err := os.WriteFile(hung, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := anyLine(Sources(map[string]string{"claude": claude, "muse": muse}))
	r := startRun(t, options(src), func(w *Watcher) { hostsOf(w).askers["muse"].host.Program = hung })

	appendTo(t, filepath.Join(muse, "sessions", "2026", "12", "04", "s1", "session.jsonl"), "{}\n")
	eventually(t, "the host asked", func() bool { return hostsOf(r.w).starts() == 1 })
	file := filepath.Join(claude, "projects", "p", "s.jsonl")
	appendTo(t, file, "after\n")
	if recs := r.records(1); recs[0].Path != file {
		t.Errorf("read %s, want the Claude Code file", recs[0].Path)
	}
	if stuck := r.w.Stats().Stuck; len(stuck) != 0 {
		t.Errorf("stuck before the host's time is up: %+v", stuck)
	}
}

// hostsOf is w's source of host queries.
func hostsOf(w *Watcher) *hostSource { return w.sourceOf(classify.HostQuery).(*hostSource) }
