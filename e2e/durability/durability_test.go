package durability

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
)

// historyFiles is the size of the generated history: a developer machine
// with months of sessions.
const historyFiles = 2000

// A first start on months of history tells nothing, stores a position for
// every file, and neither a restart after `nudge quit` nor one after
// kill -9 (at the end of the first scan, or in the middle of it) tells any
// of it; what is written afterwards is told.
func TestHistoryIsNeverTold(t *testing.T) {
	m := newMachine(t)
	dead := writeHistory(t, m.home, historyFiles)
	first := m.start()
	st := m.status()
	if st.FilesWatched != historyFiles {
		t.Fatalf("files watched %d, want %d", st.FilesWatched, historyFiles)
	}
	after := map[string]int{"first start": len(m.entries())}
	m.quit()
	m.start()
	after["restart after quit"] = len(m.entries())
	m.kill()
	m.start()
	after["restart after kill -9"] = len(m.entries())
	m.kill()

	// kill -9 in the middle of a first look, then start again.
	fresh := *m
	fresh.data = filepath.Join(m.dir, "data2")
	fresh.env = append(append([]string{}, m.env...), "NUDGE_DATA_DIR="+fresh.data)
	fresh.daemon = nil
	fresh.startNoWait()
	fresh.eventually("the first scan under way", 30*time.Second, func() bool {
		out, err := fresh.nudge("status", "--json")
		return err == nil && strings.Contains(string(out), `"files_watched"`) && !strings.Contains(string(out), `"files_watched":0`)
	})
	fresh.kill()
	fresh.start()
	after["kill -9 during the first look, then start"] = len(fresh.entries())
	fresh.quit()

	t.Logf("history: %d files holding %d dead turns; first start ready in %s", historyFiles, dead, first.Round(time.Millisecond))
	for what, n := range after {
		t.Logf("Inbox entries after %s: %d", what, n)
		if n != 0 {
			t.Errorf("%d Inbox entries after %s: old history was told", n, what)
		}
	}

	// What is written now is told: a dead turn appended to an old file and
	// one in a new file.
	m.start()
	old, err := filepath.Glob(filepath.Join(m.home, ".claude", "projects", "-home-dev-project01", "*.jsonl"))
	if err != nil || len(old) == 0 {
		t.Fatalf("no old transcript: %v", err)
	}
	session := strings.TrimSuffix(filepath.Base(old[0]), ".jsonl")
	tr := &transcript{m: m, session: session, path: old[0]}
	tr.append(tr.records(prompt("again"), apiError500()))
	m.transcript("22222222-2222-4222-8222-222222222222").append(m.transcript("22222222-2222-4222-8222-222222222222").deadTurns(1))
	m.eventually("the two new dead turns told", 30*time.Second, func() bool { return len(m.entries()) == 2 })
	m.stays("nothing else told", 2*time.Second, func() bool { return len(m.entries()) == 2 })
}

// startNoWait runs the daemon without waiting for its first scan.
func (m *machine) startNoWait() {
	m.t.Helper()
	m.daemon = daemontest.Start(m.t, m.env, "run", "--headless")
}

// A file replaced by the same content plus a line (mv over it), or
// rewritten with an earlier line changed (sed -i), tells only what is new;
// a restart adds nothing.
func TestReplacedFileTellsOnlyWhatIsNew(t *testing.T) {
	m := newMachine(t)
	m.start()
	tr := m.transcript("33333333-3333-4333-8333-333333333333")
	tr.append(tr.deadTurns(40))
	m.eventually("40 dead turns told", 30*time.Second, func() bool { return len(m.entries()) == 40 })

	content, err := os.ReadFile(tr.path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(m.dir, "copy.jsonl")
	if err := os.WriteFile(tmp, append(content, tr.deadTurns(1)...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, tr.path); err != nil { // mv over it: a new inode
		t.Fatal(err)
	}
	m.eventually("the new dead turn told", 30*time.Second, func() bool { return len(m.entries()) == 41 })
	m.stays("no old dead turn told again", 3*time.Second, func() bool { return len(m.entries()) == 41 })

	// sed -i: an early line changes, the file is read from its start, and
	// only the one new dead turn is told.
	content, _ = os.ReadFile(tr.path)
	edited := strings.Replace(string(content), "task 0", "task zero", 1) + tr.deadTurns(1)
	if err := os.WriteFile(tmp, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, tr.path); err != nil {
		t.Fatal(err)
	}
	m.eventually("the second new dead turn told", 30*time.Second, func() bool { return len(m.entries()) == 42 })
	m.stays("no old dead turn told again", 3*time.Second, func() bool { return len(m.entries()) == 42 })
	m.kill()
	m.start()
	m.stays("a restart tells nothing again", 3*time.Second, func() bool { return len(m.entries()) == 42 })
	t.Logf("40 dead turns, replaced with one more, then rewritten with one more: %d Inbox entries", len(m.entries()))
}

// A file truncated and rewritten at once, longer, with the same first
// bytes, is read again from its start: its new dead turn is told, while
// running and while stopped.
func TestSameHeadRewriteIsSeen(t *testing.T) {
	m := newMachine(t)
	m.start()
	tr := m.transcript("44444444-4444-4444-8444-444444444444")
	head := tr.records(map[string]any{"type": "permission-mode", "permissionMode": strings.Repeat("default", 60), "uuid": "head"})
	tr.append(head + tr.records(prompt("short"), map[string]any{"type": "assistant", "message": map[string]any{"model": "claude-opus-5-5", "stop_reason": "end_turn", "content": []any{}}}))
	m.eventually("the first version read", 30*time.Second, func() bool { return m.events(tr.session)["turn_done"] == 1 })

	rewrite := func() {
		longer := head + tr.records(prompt(strings.Repeat("a much longer first prompt ", 20)), apiError500())
		if err := os.WriteFile(tr.path, []byte(longer), 0o600); err != nil { // O_TRUNC: the same inode
			t.Fatal(err)
		}
	}
	rewrite()
	m.eventually("the rewritten dead turn told", 30*time.Second, func() bool { return len(m.entries()) == 1 })
	m.quit()
	rewrite()
	m.start()
	m.eventually("the dead turn rewritten while stopped told", 30*time.Second, func() bool { return len(m.entries()) == 2 })
	if !strings.Contains(m.daemon.Log.String(), "was rewritten before the position read up to; reading it from the start") {
		t.Errorf("the rewrite is not logged:\n%s", m.daemon.Log)
	}
	m.stays("nothing told twice", 2*time.Second, func() bool { return len(m.entries()) == 2 })
}

// Malformed, cut-off and binary lines are skipped, counted per file with
// the offset and reason in `status --json` and `doctor`, and logged once
// per file per minute with a count; the dead turn after them is told.
func TestBadLinesAreCountedAndLogged(t *testing.T) {
	m := newMachine(t)
	m.start()
	tr := m.transcript("55555555-5555-4555-8555-555555555555")
	first := tr.records(prompt("before"))
	tr.append(first + `{"type":"assistant","message":{"content":[` + "\n" + "\x00\x01\x02\xff binary\n" + "not json at all\n" + tr.records(apiError500()))
	m.eventually("the dead turn after the bad lines told", 30*time.Second, func() bool { return len(m.entries()) == 1 })
	st := m.status()
	if st.LinesSkipped != 3 || len(st.SkippedFiles) != 1 || st.SkippedFiles[0].Path != tr.path || st.SkippedFiles[0].Lines != 3 ||
		st.SkippedFiles[0].Reason != "not a JSON record (malformed or cut off)" {
		t.Fatalf("status: %+v", st)
	}
	out, err := m.nudge("doctor")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "3 skipped since start") || !strings.Contains(string(out), "3 in "+tr.path+", the latest at offset") {
		t.Errorf("doctor does not list the skipped lines:\n%s", out)
	}
	log := m.daemon.Log.String()
	if n := strings.Count(log, `msg="bad line skipped"`); n != 1 || !strings.Contains(log, "offset="+strconv.Itoa(len(first))) {
		t.Errorf("want one log line for the first bad line at offset %d (the rest within the minute are counted):\n%s", len(first), log)
	}
}

// Restarts read the live registry and a transcript's end again: no event is
// stored twice, also when a turn's second ending was written while stopped.
func TestRestartsStoreNoEventTwice(t *testing.T) {
	m := newMachine(t)
	session := "66666666-6666-4666-8666-666666666666"
	registry := filepath.Join(m.home, ".claude", "sessions", "4242.json")
	if err := os.MkdirAll(filepath.Dir(registry), 0o700); err != nil {
		t.Fatal(err)
	}
	reg, _ := json.Marshal(map[string]any{"pid": 4242, "sessionId": session, "cwd": "/home/dev/p", "status": "idle", "updatedAt": time.Now().UnixMilli()})
	if err := os.WriteFile(registry, reg, 0o600); err != nil {
		t.Fatal(err)
	}
	m.start()
	tr := m.transcript(session)
	tr.append(tr.records(prompt("one"), map[string]any{"type": "assistant", "message": map[string]any{"model": "claude-opus-5-5", "stop_reason": "end_turn", "content": []any{}}}))
	m.eventually("the turn done", 30*time.Second, func() bool { return m.events(session)["turn_done"] == 1 })
	m.kill()
	tr.append(tr.records(map[string]any{"type": "system", "subtype": "turn_duration", "durationMs": 10}))
	for i := range 6 {
		m.start()
		if i%2 == 0 {
			m.quit()
		} else {
			m.kill()
		}
	}
	m.start()
	got := m.events(session)
	t.Logf("events after 7 restarts: %v", got)
	if got["turn_done"] != 1 || got["agent_idle"] != 1 || got["user_message"] != 1 {
		t.Errorf("events %v: want each once", got)
	}
}
