//go:build linux

package processes

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"nudge/internal/testenv"
)

// processReads matches, in strace's output, an open of a process's /proc
// folder or of a file in one (opened relative to it).
var processReads = regexp.MustCompile(`openat\((AT_FDCWD, "/proc/[0-9]+|[0-9]+, "(cmdline|stat|status|environ)")`)

// With an OpenCode database present and no agent at work, the daemon does
// not read the process table: no open of /proc/<pid> during a quiet window
// after it is ready (NUDGE_E2E_IDLE_WINDOW, default 15s). A change of the
// database makes it look once.
func TestIdleDaemonLeavesTheProcessTableAlone(t *testing.T) {
	strace := testenv.Need(t, "strace")
	if out, err := exec.Command(strace, "-f", "-qq", "-e", "trace=openat", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		testenv.Missing(t, fmt.Sprintf("strace cannot trace a program here (ptrace not allowed?): %v: %s", err, out))
	}
	window := 15 * time.Second
	if v := os.Getenv("NUDGE_E2E_IDLE_WINDOW"); v != "" {
		var err error
		if window, err = time.ParseDuration(v); err != nil {
			t.Fatalf("NUDGE_E2E_IDLE_WINDOW: %v", err)
		}
	}
	m := newMachine(t)
	person := m.me("person")
	db := m.openCodeDB(person, nil)
	trace := filepath.Join(m.dir, "strace.out")
	d := m.startNudgeUnder(person, []string{strace, "-f", "-qq", "-e", "trace=openat", "-o", trace})
	eventually(t, "the end of the search the first read of the database asks for", 30*time.Second, func() bool {
		return strings.Contains(d.logText(), "looked for OpenCode servers")
	})
	read := func() []string {
		b, _ := os.ReadFile(trace)
		return processReads.FindAllString(string(b), -1)
	}
	before := len(read())
	if before == 0 {
		t.Fatal("strace saw no process reads at all, not even the first search: it does not trace the daemon")
	}
	time.Sleep(window)
	quiet := len(read()) - before
	t.Logf("%s quiet: %d opens of /proc/<pid> (the first search made %d)", window, quiet, before)
	if quiet != 0 {
		t.Errorf("the idle daemon read the process table %d times in %s:\n%s", quiet, window, strings.Join(read()[before:], "\n"))
	}

	// OpenCode at work: one search.
	writeRow(t, db)
	eventually(t, "a search after the database changed", 10*time.Second, func() bool { return len(read()) > before+quiet })
}

// writeRow commits a row to the OpenCode database, as OpenCode does.
func writeRow(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path, RawQuery: "_pragma=busy_timeout(2000)"}).String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE session SET time_updated = time_updated + 1`); err != nil {
		t.Fatal(err)
	}
}
