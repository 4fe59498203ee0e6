//go:build torture

package torture

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/testenv"
)

// family is one kind of bad input: it damages the world, writing dead turns
// around the damage, and says how many dead turns it wrote and how many
// lines must be skipped.
type family struct {
	name string
	do   func(b *bad) (deadTurns, skipped int)
}

// bad is the bad-input suite's world: one daemon, retry off, a Claude root.
type bad struct {
	*world
	projects string
	n        int
}

// file is a session file of its own.
func (b *bad) file(name string) string {
	return filepath.Join(b.projects, "-home-dev-p", name+".jsonl")
}

// deadTurn is a prompt and a provider error, as lines, unique.
func (b *bad) deadTurn() []byte {
	b.n++
	var out []byte
	for _, rec := range []map[string]any{
		{"type": "user", "message": map[string]any{"role": "user", "content": fmt.Sprintf("bad input task %d", b.n)}, "origin": map[string]any{"kind": "human"}, "promptSource": "typed"},
		deadTurnRecord("provider_error", fmt.Sprintf("bad input dead turn %d", b.n)),
	} {
		rec["sessionId"], rec["cwd"], rec["uuid"] = fmt.Sprintf("bad-%d", b.n), "/home/dev/p", fmt.Sprintf("bad-rec-%d-%s", b.n, rec["type"])
		rec["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		line, _ := json.Marshal(rec)
		out = append(append(out, line...), '\n')
	}
	return out
}

func (b *bad) append(path string, data ...[]byte) {
	b.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		b.t.Fatal(err)
	}
	defer f.Close()
	for _, d := range data {
		if _, err := f.Write(d); err != nil {
			b.t.Fatal(err)
		}
	}
}

// entries is the number of Inbox entries.
func (b *bad) entries() int {
	n := 0
	for _, c := range b.counts("SELECT 'all', count(*) FROM entries") {
		n += c
	}
	return n
}

// skipped is the daemon's count of skipped lines.
func (b *bad) skipped() int {
	out, err := daemontest.CLI(b.env, "status", "--json")
	if err != nil {
		b.t.Fatal(err)
	}
	var st struct {
		Daemon struct {
			LinesSkipped int `json:"lines_skipped"`
		}
	}
	if err := json.Unmarshal(out, &st); err != nil {
		b.t.Fatal(err)
	}
	return st.Daemon.LinesSkipped
}

var families = []family{
	{"malformed", func(b *bad) (int, int) {
		b.append(b.file("malformed"), []byte(`{"type":"assistant","message":`+"\n"+`{not json}`+"\n"+`["an array",`+"\n"), b.deadTurn())
		return 1, 3
	}},
	{"half line", func(b *bad) (int, int) {
		p := b.file("half")
		b.append(p, []byte(`{"type":"user","message":{"role":"us`))
		time.Sleep(300 * time.Millisecond)
		b.append(p, []byte("\n"), b.deadTurn()) // a writer that died mid-line, then another
		turn := b.deadTurn()
		b.append(p, turn[:len(turn)/2]) // a line still being written
		time.Sleep(300 * time.Millisecond)
		b.append(p, turn[len(turn)/2:])
		return 2, 1
	}},
	{"100 MB line", func(b *bad) (int, int) {
		p := b.file("huge")
		b.append(p, []byte(`{"type":"attachment","content":"`), bytes.Repeat([]byte("x"), 100<<20), []byte("\"}\n"), b.deadTurn())
		return 1, 1
	}},
	{"binary", func(b *bad) (int, int) {
		junk := make([]byte, 4096)
		for i := range junk {
			junk[i] = byte(rand.IntN(256))
			if junk[i] == '\n' {
				junk[i] = 0
			}
		}
		junk[0] = 0
		b.append(b.file("binary"), junk, []byte("\n"), b.deadTurn())
		return 1, 1
	}},
	{"truncation", func(b *bad) (int, int) {
		p := b.file("truncated")
		before := b.entries() // counted first: the daemon may tell them before a count after
		b.append(p, b.deadTurn(), b.deadTurn())
		b.waitEntries(before + 2)
		if err := os.Truncate(p, 0); err != nil {
			b.t.Fatal(err)
		}
		b.append(p, b.deadTurn())
		return 3, 0
	}},
	{"replaced inode", func(b *bad) (int, int) {
		p := b.file("replaced")
		before := b.entries() // counted first: the daemon may tell them before a count after
		b.append(p, b.deadTurn(), b.deadTurn())
		b.waitEntries(before + 2)
		old, _ := os.ReadFile(p)
		tmp := filepath.Join(b.dir, "replacement")
		if err := os.WriteFile(tmp, append(old, b.deadTurn()...), 0o644); err != nil {
			b.t.Fatal(err)
		}
		if err := os.Rename(tmp, p); err != nil {
			b.t.Fatal(err)
		}
		return 3, 0
	}},
	{"deletion", func(b *bad) (int, int) {
		p := b.file("deleted")
		before := b.entries() // counted first: the daemon may tell them before a count after
		b.append(p, b.deadTurn())
		b.waitEntries(before + 1)
		if err := os.Remove(p); err != nil {
			b.t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		b.append(p, b.deadTurn())
		return 2, 0
	}},
	{"unreadable folder", func(b *bad) (int, int) {
		staged := filepath.Join(b.dir, "locked")
		b.append(filepath.Join(staged, "locked.jsonl"), b.deadTurn())
		if err := os.Chmod(staged, 0); err != nil {
			b.t.Fatal(err)
		}
		target := filepath.Join(b.projects, "-home-dev-locked")
		if err := os.Rename(staged, target); err != nil {
			b.t.Fatal(err)
		}
		daemontest.Eventually(b.t, "the unreadable folder logged", 10*time.Second, func() bool {
			return strings.Contains(b.daemon.Log.String(), "path="+target+` err="permission denied"`)
		})
		time.Sleep(1500 * time.Millisecond) // scans come and go; nothing can be read
		if err := os.Chmod(target, 0o755); err != nil {
			b.t.Fatal(err)
		}
		return 1, 0
	}},
	{"symlink loop", func(b *bad) (int, int) {
		for _, l := range [][2]string{{"loop", "loop"}, {"a", "b"}, {"b", "a"}, {"up", ".."}} {
			if err := os.Symlink(l[1], filepath.Join(b.projects, l[0])); err != nil {
				b.t.Fatal(err)
			}
		}
		b.append(b.file("after-loops"), b.deadTurn())
		daemontest.Eventually(b.t, "the loops logged", 10*time.Second, func() bool {
			return strings.Contains(b.daemon.Log.String(), `msg="cannot follow link"`)
		})
		return 1, 0
	}},
}

func (b *bad) waitEntries(n int) {
	b.t.Helper()
	daemontest.Eventually(b.t, fmt.Sprintf("%d Inbox entries", n), 30*time.Second, func() bool { return b.entries() >= n })
}

// TestBadInput: ten families of bad input; every dead turn around them is
// told exactly once, every bad line is counted, the daemon keeps running.
// As root the daemon runs without the right to bypass file permissions, so
// an unreadable folder is unreadable to it too.
func TestBadInput(t *testing.T) {
	b := &bad{world: newWorld(t, "NUDGE_RETRY_ENABLED=false")}
	b.projects = filepath.Join(b.home, ".claude", "projects")
	var wrapper []string
	if os.Geteuid() == 0 {
		wrapper = []string{testenv.Need(t, "setpriv"), "--bounding-set", "-dac_override,-dac_read_search", "--"}
	}
	b.daemon = daemontest.StartWrapped(t, b.env, wrapper, "run", "--headless")
	b.daemon.WaitReady(t)

	var report []string
	wantEntries, wantSkipped := 0, 0
	for _, f := range families {
		before, skippedBefore := b.entries(), b.skipped()
		dead, skipped := f.do(b)
		wantEntries += dead
		wantSkipped += skipped
		b.waitEntries(wantEntries)
		time.Sleep(500 * time.Millisecond) // a second entry would come now
		got, gotSkipped := b.entries(), b.skipped()
		report = append(report, fmt.Sprintf("%s: %d dead turns, %d entries, %d lines skipped", f.name, dead, got-before, gotSkipped-skippedBefore))
		if got != wantEntries {
			t.Errorf("%s: %d Inbox entries in all, want %d: a dead turn lost or told twice", f.name, got, wantEntries)
		}
		if gotSkipped != wantSkipped {
			t.Errorf("%s: %d lines skipped in all, want %d", f.name, gotSkipped, wantSkipped)
		}
		if b.daemon.Cmd.ProcessState != nil {
			t.Fatalf("%s: the daemon stopped:\n%s", f.name, b.daemon.Log)
		}
	}
	b.quit()
	report = append(report, fullDisk(t))
	t.Logf("bad input:\n\t%s", strings.Join(report, "\n\t"))
}

// fullDisk is the tenth family: the data folder on a tmpfs that fills up
// while dead turns are written; they are told once when space returns.
// Mounting needs root: without it the family skips (and fails under CI).
func fullDisk(t *testing.T) string {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "the full-disk family mounts a small tmpfs, which needs root")
		return "full disk: skipped (not root)"
	}
	b := &bad{world: newWorld(t, "NUDGE_RETRY_ENABLED=false")}
	b.projects = filepath.Join(b.home, ".claude", "projects")
	if err := os.MkdirAll(b.data, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=12m,mode=0700", "tmpfs", b.data).CombinedOutput(); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs: "+strings.TrimSpace(string(out)))
		return "full disk: skipped (no tmpfs)"
	}
	t.Cleanup(func() { exec.Command("umount", "-l", b.data).Run() })
	b.start(true)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.data, "nudge.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	filler := filepath.Join(b.data, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for size := len(chunk); size > 0; size /= 2 {
		for {
			if _, err := f.Write(chunk[:size]); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	f.Close()
	p := b.file("full")
	for range 4 {
		b.append(p, b.deadTurn())
		time.Sleep(300 * time.Millisecond)
	}
	time.Sleep(time.Second)
	during := b.entries()
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	b.waitEntries(4)
	time.Sleep(time.Second)
	got := b.entries()
	if during != 0 || got != 4 {
		t.Errorf("full disk: %d entries while full, %d after: want 0, then each of the 4 dead turns once", during, got)
	}
	if !strings.Contains(b.daemon.Log.String(), "cannot store what was read") {
		t.Errorf("full disk: the store never failed; the disk was not full?\n%s", b.daemon.Log)
	}
	b.quit()
	return fmt.Sprintf("full disk: 4 dead turns, %d entries while full, %d after", during, got)
}
