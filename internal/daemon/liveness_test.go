package daemon

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/internal/classify"
	"nudge/internal/config"
	"nudge/internal/inbox"
	"nudge/internal/memory"
	"nudge/internal/retry"
	"nudge/internal/samples"
	"nudge/internal/watch"
)

// quietDaemon is a daemon with a real database and an idle watcher, not
// running its loop: the test plays the loop.
func quietDaemon(t *testing.T, now time.Time) *Daemon {
	t.Helper()
	dir := t.TempDir()
	d, err := New(config.Config{DataDir: dir}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if d.db, err = inbox.Open(filepath.Join(dir, "nudge.db")); err != nil {
		t.Fatal(err)
	}
	d.store = d.db
	t.Cleanup(func() { d.db.Close() })
	if d.source, err = watch.New(watch.Options{}); err != nil {
		t.Fatal(err)
	}
	d.now = func() time.Time { return now }
	d.settings = retry.DefaultSettings()
	d.ready = true
	return d
}

// openTurn is a Kimi Code session (no live registry) with a turn open since start.
func openTurn(d *Daemon, project string, start time.Time) *session {
	s := d.session(retry.Key{Agent: "kimi_code", Session: "session_1"})
	s.project = project
	s.machine.Observe(classify.Event{Agent: "kimi_code", Session: "session_1", Project: project, Time: start, Kind: classify.TurnStarted}, start, d.settings)
	s.updated = start
	d.scheduleLiveCheck(s)
	return s
}

// playLoop runs the liveness check and then what it hands back to the loop.
func playLoop(t *testing.T, d *Daemon) {
	t.Helper()
	d.checkLiveness(context.Background())
	takeCall(t, d)
}

// takeCall runs the next call handed to the loop.
func takeCall(t *testing.T, d *Daemon) {
	t.Helper()
	select {
	case f := <-d.calls:
		f()
	case <-time.After(10 * time.Second):
		t.Fatal("the liveness check did not answer")
	}
}

func TestOpenTurnWithoutProcessIsToldOnce(t *testing.T) {
	start := time.Now()
	d := quietDaemon(t, start.Add(quietBeforeLiveCheck+time.Second))
	s := openTurn(d, t.TempDir(), start)
	memory.Rest() // as after a give-back: the check comes after a quiet spell
	t.Cleanup(memory.Wake)
	playLoop(t, d)
	if resting() {
		t.Fatal("the collector still rests while the answer is stored")
	}
	if want := d.now().Add(GiveBackAfterRequest); !d.giveBackAt.Equal(want) {
		t.Fatalf("memory given back at %v, want %v: what storing the answer mapped is given back once quiet", d.giveBackAt, want)
	}
	if state, _ := s.machine.State(); state != retry.Failed {
		t.Fatalf("state %s, want failed: the process is gone with its turn open", state)
	}
	entries, err := d.db.Entries(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Class != string(classify.Unknown) {
		t.Fatalf("entries %+v: want one unknown entry", entries)
	}
	d.checkLiveness(context.Background())
	select {
	case <-d.calls:
		t.Fatal("a failed session must not be checked again")
	case <-time.After(300 * time.Millisecond):
	}
}

// startAgent runs a stand-in of the Kimi Code CLI (sleep under its name)
// in project.
func startAgent(t *testing.T, project string) *exec.Cmd {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	bin := filepath.Join(t.TempDir(), "kimi-code")
	if err := os.Symlink(sleep, bin); err != nil {
		t.Fatal(err)
	}
	agent := exec.Command(bin, "60")
	agent.Dir = project
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Process.Kill(); agent.Wait() })
	return agent
}

func TestOpenTurnWithLiveProcessStaysWorking(t *testing.T) {
	project := t.TempDir()
	agent := startAgent(t, project)

	start := time.Now()
	d := quietDaemon(t, start.Add(quietBeforeLiveCheck+time.Second))
	s := openTurn(d, project, start)
	playLoop(t, d)
	if state, _ := s.machine.State(); state != retry.Working {
		t.Fatalf("state %s, want working: the agent process is alive", state)
	}
	if len(d.liveDue) != 0 {
		t.Errorf("liveness checks still due %v: the process's end is watched instead", d.liveDue)
	}
	select {
	case <-d.calls:
		t.Fatal("an end told while the process runs")
	case <-time.After(300 * time.Millisecond):
	}

	// At its end the search is made once more, and finds none.
	agent.Process.Kill()
	agent.Wait()
	takeCall(t, d)
	if state, _ := s.machine.State(); state != retry.Failed {
		t.Fatalf("state %s after the process ended, want failed", state)
	}
}

// When the process watched ends while another took the session on, the
// turn is not told as ended: the new process is watched instead.
func TestOpenTurnTakenOnByAnotherProcess(t *testing.T) {
	project := t.TempDir()
	first := startAgent(t, project)
	start := time.Now()
	d := quietDaemon(t, start.Add(quietBeforeLiveCheck+time.Second))
	s := openTurn(d, project, start)
	playLoop(t, d)
	second := startAgent(t, project)
	first.Process.Kill()
	first.Wait()
	takeCall(t, d)
	if state, _ := s.machine.State(); state != retry.Working || s.exit == nil {
		t.Fatalf("state %s, watching %v: want working, the second process watched", state, s.exit != nil)
	}
	second.Process.Kill()
	second.Wait()
	takeCall(t, d)
	if state, _ := s.machine.State(); state != retry.Failed {
		t.Fatalf("state %s after both processes ended, want failed", state)
	}
}

func TestRecentTurnIsNotChecked(t *testing.T) {
	start := time.Now()
	d := quietDaemon(t, start.Add(quietBeforeLiveCheck/2))
	openTurn(d, t.TempDir(), start)
	d.checkLiveness(context.Background())
	select {
	case <-d.calls:
		t.Fatal("a turn that wrote recently must not be checked")
	case <-time.After(300 * time.Millisecond):
	}
}

// A Codex 0.98 rollout writes no turn end: its dead turn is judged once the
// file has been quiet (classify.Settler), by a timer set for that file.
func TestQuietLegacyRolloutIsSettled(t *testing.T) {
	sample := samples.Dir("codex", "old-0.98.0-api500.jsonl")
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatalf("sample: %v", err)
	}
	start := time.Now()
	now := start
	d := quietDaemon(t, start)
	d.now = func() time.Time { return now }
	var b watch.Batch
	offset := int64(0)
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		end := offset + int64(len(line)) + 1
		b.Records = append(b.Records, watch.Record{Agent: "codex", Path: sample, Offset: offset, End: end, Line: []byte(line)})
		offset = end
	}
	d.handleBatch(context.Background(), b)
	if at, ok := d.settleDue[sample]; !ok || at.Before(start.Add(time.Second)) {
		t.Fatalf("settle due %v (%v): want a timer for the quiet file", at, ok)
	}
	d.settleQuietFiles(context.Background())
	if n := failedSessions(d); n != 0 {
		t.Fatalf("%d dead turns before the file went quiet", n)
	}
	// The first look, at the first timer, finds no error in the TUI's log:
	// the timer is set again, for the silence.
	first := d.settleDue[sample]
	now = first
	d.settleQuietFiles(context.Background())
	if n := failedSessions(d); n != 0 {
		t.Fatalf("%d dead turns at the first look", n)
	}
	if at, ok := d.settleDue[sample]; !ok || !at.After(first) {
		t.Fatalf("settle due %v (%v) after the first look at %v: want a later timer", at, ok, first)
	}
	now = start.Add(2 * time.Minute)
	d.settleQuietFiles(context.Background())
	if n := failedSessions(d); n != 1 {
		t.Fatalf("%d failed sessions after the file went quiet, want 1", n)
	}
	entries, err := d.db.Entries(context.Background(), false)
	if err != nil || len(entries) != 1 {
		t.Fatalf("entries %+v, %v: want the one dead turn told", entries, err)
	}
}

func failedSessions(d *Daemon) int {
	n := 0
	for _, s := range d.sessions {
		if state, _ := s.machine.State(); state == retry.Failed {
			n++
		}
	}
	return n
}
