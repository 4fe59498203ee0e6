package pipe

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/daemontest"
)

// (a) A 500 is continued after the first delay; the success that follows
// resets the counter, so the next dead turn starts again at attempt 1.
func TestProviderErrorIsContinuedAndSuccessResets(t *testing.T) {
	w := newWorld(t, "1s,1s,1s")
	w.startDaemon()
	w.startAgent("500,ok,500,ok")
	w.typeLine("hello")
	w.eventually("the continuation reaches the pane", 15*time.Second, func() bool { return w.continuations() == 1 })
	w.eventually("the turn completes", 10*time.Second, func() bool { return w.state() == "finished" })

	w.typeLine("second task")
	w.eventually("the second dead turn is continued too", 15*time.Second, func() bool { return w.continuations() == 2 })
	w.eventually("and completes", 10*time.Second, func() bool { return w.state() == "finished" })

	got := w.receivedLines()
	want := []string{"hello", continuation, "second task", continuation}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("pane received %q, want %q", got, want)
	}
	var tl struct {
		Events []struct {
			Kind       string
			Time       *time.Time
			DetectedAt time.Time `json:"detected_at"`
		}
		Attempts []struct {
			Attempt int
			Status  string
			Backend string
		}
	}
	out, err := w.nudge("explain", "--json", "11111111")
	must(t, err)
	must(t, json.Unmarshal(out, &tl))
	if len(tl.Attempts) != 2 {
		t.Fatalf("explain lists %d attempts, want 2: %s", len(tl.Attempts), out)
	}
	for _, a := range tl.Attempts {
		if a.Attempt != 1 || a.Status != "sent" || a.Backend != "tmux" {
			t.Errorf("attempt %+v: want attempt 1 sent through tmux (a success resets the counter)", a)
		}
	}
	failed := 0
	for _, e := range tl.Events {
		if e.Kind == "turn_failed" {
			failed++
			if e.Time == nil || e.DetectedAt.IsZero() || e.DetectedAt.Before(*e.Time) {
				t.Errorf("event times: record %v, detected %v", e.Time, e.DetectedAt)
			}
		}
	}
	if failed != 2 {
		t.Errorf("explain shows %d dead turns, want 2", failed)
	}
	if es := w.inbox(); len(es) != 0 {
		t.Errorf("recovered turns must not fill the Inbox: %+v", es)
	}
}

// (b) Four failures in a row: exactly three continuations, then one Inbox
// entry with the original error text and one notification.
func TestGivesUpAfterThreeAttempts(t *testing.T) {
	w := newWorld(t, "1s,1s,1s")
	w.startDaemon()
	w.startAgent("500,500,500,500")
	w.typeLine("hello")
	w.eventually("an Inbox entry", 30*time.Second, func() bool { return len(w.inbox()) > 0 })
	n := w.notes.Next(t)
	w.never("a fourth continuation", 3*time.Second, func() bool { return w.continuations() > 3 })
	if got := w.continuations(); got != 3 {
		t.Fatalf("%d continuations, want exactly 3", got)
	}
	es := w.inbox()
	if len(es) != 1 {
		t.Fatalf("%d Inbox entries, want 1: %+v", len(es), es)
	}
	e := es[0]
	if !strings.Contains(e.ErrorText, "API Error: 500 Internal server error") || e.Agent != "claude" ||
		!strings.HasPrefix(e.Session, "11111111") || e.Attempts != 3 || !strings.HasSuffix(e.Project, "project") {
		t.Errorf("entry %+v: want the original error text, agent, project, session and 3 attempts", e)
	}
	if n.AppName != "nudge" || !strings.Contains(n.Summary+n.Body, "500") {
		t.Errorf("notification %+v: want nudge's, with the error", n)
	}
	select {
	case extra := <-w.notes.Notifications():
		t.Errorf("a second notification: %+v", extra)
	case <-time.After(time.Second):
	}
	if s := w.state(); s != "gave_up" {
		t.Errorf("state %q, want gave_up", s)
	}
}

// (c) A person typing during the wait cancels the pending retry.
func TestPersonsMessageCancelsTheRetry(t *testing.T) {
	w := newWorld(t, "3s,3s,3s")
	w.startDaemon()
	w.startAgent("500,ok")
	w.typeLine("hello")
	w.eventually("the retry is scheduled", 10*time.Second, func() bool { return w.state() == "retrying" })
	w.typeLine("never mind, do this instead")
	w.never("a continuation", 6*time.Second, func() bool { return w.continuations() > 0 })
	if s := w.state(); s != "finished" {
		t.Errorf("state %q, want finished", s)
	}
}

// (d) While a permission box is open nothing is typed; once it closes, the
// continuation goes in.
func TestNothingIsTypedWhileABoxIsOpen(t *testing.T) {
	w := newWorld(t, "2s,2s,2s")
	w.startDaemon()
	w.startAgent("500,ok")
	w.typeLine("hello")
	w.eventually("the retry is scheduled", 10*time.Second, func() bool { return w.state() == "retrying" })
	pid := w.agentPID()
	must(t, syscall.Kill(pid, syscall.SIGUSR1)) // a box opens
	w.eventually("nudge waits for the box", 10*time.Second, func() bool { return w.state() == "waiting_box" })
	w.never("typing into the open box", 4*time.Second, func() bool { return len(w.receivedLines()) > 1 })
	must(t, syscall.Kill(pid, syscall.SIGUSR2)) // the person answers it
	w.eventually("the continuation after the box closed", 15*time.Second, func() bool { return w.continuations() == 1 })
}

// (e) A daemon killed between "sending" and "sent" never sends that
// attempt again after a restart, and the person is told.
func TestNoSecondSendAfterCrashDuringDelivery(t *testing.T) {
	w := newWorld(t, "1s,1s,1s")
	// A tmux in front of the real one that stalls the delivery, so the
	// daemon can be killed in the middle of it.
	realTmux, err := exec.LookPath("tmux")
	must(t, err)
	slow := filepath.Join(w.dir, "slowbin")
	marker := filepath.Join(w.dir, "delivery-started")
	must(t, os.MkdirAll(slow, 0o700))
	script := "#!/bin/sh\nfor a in \"$@\"; do if [ \"$a\" = load-buffer ]; then touch " + marker + "; sleep 30; fi; done\nexec " + realTmux + " \"$@\"\n"
	must(t, os.WriteFile(filepath.Join(slow, "tmux"), []byte(script), 0o700))
	w.startDaemon("PATH=" + slow + ":" + os.Getenv("PATH"))
	w.startAgent("500,ok")
	w.typeLine("hello")
	w.eventually("the delivery starts", 15*time.Second, func() bool { _, err := os.Stat(marker); return err == nil })
	must(t, w.daemon.Cmd.Process.Kill())
	w.daemon.Exit(t)

	w.startDaemon()
	w.eventually("the person is told", 15*time.Second, func() bool { return len(w.inbox()) == 1 })
	w.never("a second send", 4*time.Second, func() bool { return w.continuations() > 0 })
	var tl struct {
		Attempts []struct {
			Attempt int
			Status  string
			Reason  string
		}
	}
	out, err := w.nudge("explain", "--json", "11111111")
	must(t, err)
	must(t, json.Unmarshal(out, &tl))
	if len(tl.Attempts) != 1 || tl.Attempts[0].Status == "sending" || tl.Attempts[0].Reason == "" {
		t.Errorf("attempt ledger %+v: want the one interrupted attempt, settled with a reason", tl.Attempts)
	}
}

// (e2) A daemon killed after pasting the continuation and before pressing
// Enter: after the restart the entry says the text sits unsent in the
// prompt of that tmux pane (the pane shows it), nothing is typed over it,
// and the person's next message is what sends it.
func TestKillBetweenPasteAndEnterIsSaidPlainly(t *testing.T) {
	w := newWorld(t, "1s,1s,1s")
	realTmux, err := exec.LookPath("tmux")
	must(t, err)
	slow := filepath.Join(w.dir, "slowbin")
	marker := filepath.Join(w.dir, "enter-held")
	must(t, os.MkdirAll(slow, 0o700))
	// The Enter (send-keys … Enter) stalls; everything before it, the
	// paste included, reaches the real tmux.
	script := "#!/bin/sh\ncase \" $* \" in *\" send-keys \"*\" Enter \"*) echo $$ > " + marker + "; sleep 60;; esac\nexec " + realTmux + " \"$@\"\n"
	must(t, os.WriteFile(filepath.Join(slow, "tmux"), []byte(script), 0o700))
	w.startDaemon("PATH=" + slow + ":" + os.Getenv("PATH"))
	w.startAgent("500,ok")
	w.typeLine("hello")
	w.eventually("the Enter held back", 15*time.Second, func() bool { _, err := os.Stat(marker); return err == nil })
	must(t, w.daemon.Cmd.Process.Kill())
	w.daemon.Exit(t)
	if b, err := os.ReadFile(marker); err == nil {
		var pid int
		if _, err := fmt.Sscan(string(b), &pid); err == nil {
			syscall.Kill(pid, syscall.SIGKILL) // the held Enter never comes
		}
	}
	if got := w.receivedLines(); len(got) != 1 {
		t.Fatalf("the agent received %q before the restart, want only hello", got)
	}

	w.startDaemon()
	w.eventually("the person is told", 15*time.Second, func() bool { return len(w.inbox()) == 1 })
	e := w.inbox()[0]
	if !strings.Contains(e.What, "so it sits unsent in the prompt there") || !strings.Contains(e.What, "into Claude Code at tmux "+w.sock+" %") ||
		!strings.Contains(e.What, "nudge types nothing over it") {
		t.Fatalf("entry %q: want it to say, for sure, that the text sits unsent in the prompt of the pane", e.What)
	}
	w.never("anything typed over it", 4*time.Second, func() bool { return len(w.receivedLines()) > 1 })
	w.typeLine(" and more")
	w.eventually("the person's Enter sends it", 10*time.Second, func() bool { return len(w.receivedLines()) == 2 })
	if got := w.receivedLines()[1]; got != continuation+" and more" {
		t.Errorf("the agent received %q: want the text that sat in the prompt, then the person's", got)
	}
	t.Logf("entry after the restart: %s", e.What)
}

// (f) A usage limit is never continued; the state shows the reset time.
func TestUsageLimitIsNotRetried(t *testing.T) {
	w := newWorld(t, "1s,1s,1s")
	w.startDaemon()
	w.startAgent("limit", "-reset-in", "2h")
	w.typeLine("hello")
	w.eventually("usage limit state", 10*time.Second, func() bool { return w.state() == "usage_limit" })
	ss := w.sessions()
	if ss[0].ResetAt == nil || time.Until(*ss[0].ResetAt) < 110*time.Minute || time.Until(*ss[0].ResetAt) > 2*time.Hour {
		t.Errorf("reset_at %v, want about 2 h from now", ss[0].ResetAt)
	}
	w.never("a continuation", 3*time.Second, func() bool { return w.continuations() > 0 })
	es := w.inbox()
	if len(es) != 1 || es[0].Class != "usage_limit" || !strings.Contains(es[0].ErrorText, "5-hour limit") {
		t.Errorf("inbox %+v: want one usage-limit entry with the agent's text", es)
	}
}

// One daemon per user: a second one says so and exits 1.
func TestSecondDaemonRefuses(t *testing.T) {
	w := newWorld(t, "1s,1s,1s")
	w.startDaemon()
	code, _, stderr, err := daemontest.Run(w.env, "run", "--headless")
	if err != nil || code != 1 {
		t.Fatalf("second daemon: exit status %d, %v; want exit status 1\n%s", code, err, stderr)
	}
	if !strings.Contains(string(stderr), "already running") {
		t.Errorf("second daemon said %q: not why", stderr)
	}
	if _, err := w.nudge("status", "--json"); err != nil {
		t.Errorf("the first daemon must keep running: %v", err)
	}
}

// The log follows the session's course, one INFO line per change with the
// session and the agent's pid: the dead turn, the continuation scheduled,
// sending it once its terminal was found (backend and place), and the
// recovery; with log.level debug, each record's classification and each
// decision besides, and memory given back once the first scan is stored,
// the program's pages with it.
func TestLogFollowsTheSessionsCourse(t *testing.T) {
	w := newWorld(t, "1s,1s,1s")
	logFile := filepath.Join(w.dir, "nudge.log")
	w.startDaemon("NUDGE_LOG_FILE="+logFile, "NUDGE_LOG_LEVEL=debug")
	w.startAgent("500,ok")
	w.typeLine("hello")
	w.eventually("the continuation reaches the pane", 15*time.Second, func() bool { return w.continuations() == 1 })
	w.eventually("the turn completes", 10*time.Second, func() bool { return w.state() == "finished" })
	pid := w.agentPID()

	type line struct {
		Level, Msg, Session, Backend, Place, Events string
		PID                                         int
		ProgramBytes                                int64 `json:"program_bytes"`
	}
	var lines []line
	b, err := os.ReadFile(logFile)
	must(t, err)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var x line
		must(t, json.Unmarshal([]byte(l), &x))
		lines = append(lines, x)
	}
	const session = "11111111-1111-4111-8111-111111111111"
	for _, msg := range []string{"dead turn", "continuation scheduled", "sending continuation", "recovered"} {
		var found []line
		for _, l := range lines {
			if l.Msg == msg {
				found = append(found, l)
			}
		}
		if len(found) != 1 || found[0].Level != "INFO" || found[0].Session != session || found[0].PID != pid {
			t.Errorf("%q: %+v, want one INFO line about session %s with the agent's pid %d", msg, found, session, pid)
		}
		if msg == "sending continuation" && len(found) == 1 && (found[0].Backend != "tmux" || !strings.HasPrefix(found[0].Place, w.sock+" %")) {
			t.Errorf("sending: %+v, want tmux and the pane of %s", found[0], w.sock)
		}
	}
	var classified, decisions, oneCore, givenBack int
	for _, l := range lines {
		switch {
		case l.Level == "DEBUG" && l.Msg == "gave memory back" && l.ProgramBytes > 0:
			givenBack++
		case l.Level == "DEBUG" && l.Msg == "record classified" && strings.Contains(l.Events, "turn_failed/provider_error"):
			classified++
		case l.Level == "DEBUG" && l.Msg == "decision" && l.Session == session:
			decisions++
		case l.Level == "DEBUG" && strings.HasPrefix(l.Msg, "first scan done; Go code now runs on one core"):
			oneCore++
		}
	}
	if classified != 1 || decisions == 0 {
		t.Errorf("debug lines: %d dead turns classified, %d decisions:\n%s", classified, decisions, b)
	}
	if givenBack != 1 {
		t.Errorf("%d lines saying memory was given back with the program's pages, want 1: once the first scan is stored", givenBack)
	}
	if want := 1; os.Getenv("GOMAXPROCS") == "" && oneCore != want {
		t.Errorf("%d lines saying the daemon went on one core once settled, want %d", oneCore, want)
	}
}
