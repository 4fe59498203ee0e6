package security

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/samples"
)

// openCodeDB puts a copy of a real OpenCode database (in WAL mode, as
// OpenCode keeps it) where OpenCode keeps it in the world's home, and
// returns its path.
func (w *world) openCodeDB() string {
	w.t.Helper()
	dir := filepath.Join(w.home, ".local", "share", "opencode")
	must(w.t, os.MkdirAll(dir, 0o700))
	data, err := os.ReadFile(samples.Dir("opencode", "ok.opencode.db"))
	must(w.t, err)
	path := filepath.Join(dir, "opencode.db")
	must(w.t, os.WriteFile(path, data, 0o600))
	return path
}

// TestFIFOSwappedForOpenCodesDatabaseNeverStopsTheDaemon: for a few
// seconds OpenCode's database and a FIFO no one writes to swap names, over
// and over, each swap a change nudge reads the database for; then the
// FIFO is removed, so nothing could ever wake an open waiting on it. A
// Claude Code sign-in failure written after it is still told. A FIFO left
// in the database's place is shown by nudge status as a source not read,
// until the database is back.
func TestFIFOSwappedForOpenCodesDatabaseNeverStopsTheDaemon(t *testing.T) {
	w := newWorld(t, "NUDGE_RETRY_ENABLED=false")
	db := w.openCodeDB()
	w.start()
	fifo, aside := db+".fifo", db+".aside"
	must(t, syscall.Mkfifo(fifo, 0o600))
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		must(t, os.Rename(db, aside))
		must(t, os.Rename(fifo, db))
		must(t, os.Rename(db, fifo))
		must(t, os.Rename(aside, db))
	}
	must(t, os.Remove(fifo))

	w.signInFailure("6f2d0b4c-bbbb-4bbb-8bbb-888888888888", "/work/shop", "API Error: 401 Invalid API key")
	daemontest.Eventually(t, "an Inbox entry for the Claude Code turn", 20*time.Second, func() bool {
		for _, e := range w.entries() {
			if e.Agent == "claude" {
				return true
			}
		}
		return false
	})
	status := func() string {
		out, err := w.nudge("status")
		must(t, err)
		return string(out)
	}
	if out := status(); strings.Contains(out, "WARNING") {
		t.Errorf("nudge status after the swaps:\n%s", out)
	}

	// A FIFO left in the database's place: nudge status says it is not read.
	must(t, syscall.Mkfifo(fifo, 0o600))
	must(t, os.Rename(db, aside))
	must(t, os.Rename(fifo, db))
	daemontest.Eventually(t, "nudge status telling of the database it cannot read", 20*time.Second, func() bool {
		out := status()
		return strings.Contains(out, "WARNING: not read since") && strings.Contains(out, db) && strings.Contains(out, "not a regular file")
	})
	must(t, os.Rename(aside, db))
	daemontest.Eventually(t, "the warning gone once the database is back", 20*time.Second, func() bool {
		return !strings.Contains(status(), "WARNING")
	})
}

// TestOpenCodesFolderIsLeftAsItWas: nudge reads OpenCode's database
// without creating anything beside it: no -wal, no -shm.
func TestOpenCodesFolderIsLeftAsItWas(t *testing.T) {
	w := newWorld(t)
	db := w.openCodeDB()
	w.start()
	// Once it is followed, it has been read (to find its end).
	daemontest.Eventually(t, "the database followed", 20*time.Second, func() bool {
		out, err := w.nudge("status", "--json")
		return err == nil && strings.Contains(string(out), `"files_watched": 1,`)
	})
	entries, err := os.ReadDir(filepath.Dir(db))
	must(t, err)
	for _, e := range entries {
		if e.Name() != "opencode.db" {
			t.Errorf("nudge created %s beside OpenCode's database", e.Name())
		}
	}
}
