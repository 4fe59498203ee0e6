package durability

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/internal/testenv"

	_ "modernc.org/sqlite"
)

// mountTmpfs mounts a tmpfs of size at dir, unmounted when the test ends.
// Mounting needs root: the test skips without it (and fails under CI).
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Missing(t, "a full disk is made with a small tmpfs, and mounting one needs root")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs: "+strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
}

// fill writes a file at path until the disk it is on is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for size := 4096; size > 0; size /= 2 { // the last few bytes
		for {
			if _, err := f.Write(chunk[:size]); err != nil {
				break
			}
		}
	}
}

// shrinkWAL checkpoints the database and truncates its write-ahead log, so
// that the daemon's next commit needs new space (a WAL that reached a size
// is reused, and would take a few commits without any).
func shrinkWAL(t *testing.T, db string) {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
}

// A full disk under the data folder: the daemon keeps running, says so
// (status, doctor), tells nothing while it cannot store, and once space
// returns tells every dead turn written meanwhile exactly once.
func TestFullDiskLosesNothing(t *testing.T) {
	m := newMachine(t, "NUDGE_RETRY_ENABLED=false")
	mountTmpfs(t, m.data, "12m")
	m.start()
	tr := m.transcript("77777777-7777-4777-8777-777777777777")
	tr.append(tr.deadTurns(1))
	m.eventually("the first dead turn told", 30*time.Second, func() bool { return len(m.entries()) == 1 })

	shrinkWAL(t, filepath.Join(m.data, "nudge.db"))
	filler := filepath.Join(m.data, "filler")
	fill(t, filler)
	tr.append(tr.deadTurns(3))
	m.eventually("the daemon says it cannot store", 30*time.Second, func() bool { return m.status().StoreFailing != nil })
	st := m.status()
	if !strings.Contains(st.StoreFailing.Error, "full") {
		t.Errorf("store_failing %+v: want the database's own words", st.StoreFailing)
	}
	out, err := m.nudge("doctor")
	if err != nil || !strings.Contains(string(out), "cannot save since") || !strings.Contains(string(out), "nothing is lost") {
		t.Errorf("doctor does not say it cannot save (%v):\n%s", err, out)
	}
	tr.append(tr.deadTurns(2)) // written while the disk is full
	time.Sleep(2 * time.Second)
	if n := len(m.entries()); n != 1 {
		t.Fatalf("%d entries while the disk is full, want the 1 from before", n)
	}
	if strings.Contains(m.daemon.Log.String(), "nudge stopped") {
		t.Fatal("the daemon stopped on a full disk")
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	m.eventually("everything written meanwhile told", 60*time.Second, func() bool { return len(m.entries()) == 6 })
	m.stays("told once", 3*time.Second, func() bool { return len(m.entries()) == 6 })
	if m.status().StoreFailing != nil {
		t.Error("status still says the store fails")
	}
	log := m.daemon.Log.String()
	if !strings.Contains(log, "cannot store what was read") || !strings.Contains(log, "storing works again") {
		t.Errorf("the log does not say it:\n%s", log)
	}
	t.Logf("full disk: %d tries while full; 6 dead turns, 6 entries", strings.Count(log, "storing still fails")+1)
}
