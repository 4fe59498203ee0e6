package pipe

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/samples"
)

// Muse read by the host query (docs/agents/muse.md §A1): a stand-in `muse` plays
// the official MSP golden transcripts as a person's session in a tmux pane,
// and as nudge's own `muse serve`, which answers session/read and
// usage/read from what the session wrote. The daemon never reads the
// session's session.jsonl itself.

// museRun is one stand-in Muse session in a pane, with the daemon.
type museRun struct {
	*world
	serveLog string
}

// startMuse starts the daemon, then the stand-in session playing the
// golden transcript named (samples/muse/<name>.transcript.ndjson), its first
// upto lines written before any input (-1: all), with extra flags.
func startMuse(t *testing.T, name string, upto int, extra ...string) *museRun {
	t.Helper()
	w := newWorld(t, "2s,2s,2s")
	m := &museRun{world: w, serveLog: filepath.Join(w.dir, "serve.log")}
	bin := daemontest.Bin(museStandin)
	for i, kv := range w.env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			w.env[i] = "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + path
		}
	}
	w.env = append(w.env, "MUSE_STANDIN_SERVE_LOG="+m.serveLog)
	w.startDaemon()
	args := []string{"-S", w.sock, "-f", "/dev/null", "new-session", "-d", "-s", "agent", "-x", "200", "-y", "50",
		"-c", filepath.Join(w.home, "project")}
	for _, kv := range w.env {
		args = append(args, "-e", kv)
	}
	argv := append([]string{bin, "-transcript", samples.Dir("muse", name+".transcript.ndjson"), "-upto", strconv.Itoa(upto),
		"-received", w.received}, extra...)
	args = append(args, strings.Join(argv, " "))
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	w.pane = "agent:0.0"
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(m.serveLog)
			t.Logf("muse serve starts:\n%s", b)
		}
	})
	return m
}

// serveStarts lists the stand-in hosts the daemon started.
func (m *museRun) serveStarts() []string {
	b, _ := os.ReadFile(m.serveLog)
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
}

// agentPID is the stand-in session's process.
func (m *museRun) museAgentPID() int {
	m.t.Helper()
	out, err := exec.Command("tmux", "-S", m.sock, "display-message", "-p", "-t", m.pane, "#{pane_pid}").Output()
	must(m.t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	must(m.t, err)
	return pid
}

const (
	// museFailedLines: provider-failure-turn up to its failed turn/completed.
	museFailedLines = 13
	// museSession is that transcript's session.
	museSession = "018f7294-0000-7000-8000-5f0e73500000"
)

// A turn that died on the provider (modelError, retryable) is continued:
// the continuation reaches the pane once, the transcript's recovery turn
// completes, and one `muse serve` answered every question, started in
// Muse's home rather than a project.
func TestMuseProviderFailureIsContinued(t *testing.T) {
	m := startMuse(t, "provider-failure-turn", museFailedLines)
	m.eventually("the continuation reaches the pane", 20*time.Second, func() bool { return m.continuations() == 1 })
	m.eventually("the recovered turn completes", 15*time.Second, func() bool { return m.state() == "finished" })
	m.never("a second continuation", 5*time.Second, func() bool { return m.continuations() > 1 })
	if got := m.receivedLines(); len(got) != 1 || got[0] != continuation {
		t.Errorf("pane received %q, want only the continuation", got)
	}
	ss := m.sessions()
	if len(ss) != 1 || ss[0].Agent != "muse" || ss[0].Session != museSession {
		t.Errorf("sessions %+v, want the Muse session %s", ss, museSession)
	}
	starts := m.serveStarts()
	if len(starts) != 1 || !strings.HasSuffix(starts[0], filepath.Join(m.home, ".muse")) {
		t.Errorf("muse serve started %q, want once, in Muse's home", starts)
	}
	out, err := m.nudge("doctor")
	must(t, err)
	if !strings.Contains(string(out), "read by host query: `muse serve` is asked on each change of "+filepath.Join(m.home, ".muse", "sessions")) {
		t.Errorf("doctor does not say the session is read by the host query:\n%s", out)
	}
}

// authRequired is told once, with how to sign in, and never retried.
func TestMuseAuthRequiredIsToldNotRetried(t *testing.T) {
	m := startMuse(t, "auth-required.third-party", -1)
	m.eventually("the Inbox entry", 20*time.Second, func() bool { return len(m.inbox()) > 0 })
	m.never("typing a continuation", 6*time.Second, func() bool { return len(m.receivedLines()) > 0 })
	es := m.inbox()
	if len(es) != 1 || es[0].Class != "auth" || es[0].Session != "s-1" || !strings.Contains(es[0].What, "muse login") ||
		es[0].ErrorText != "run muse login" {
		t.Errorf("inbox %+v, want one auth entry for s-1 naming `muse login`", es)
	}
	if s := m.state(); s != "needs_signin" {
		t.Errorf("state %q, want needs_signin", s)
	}
}

// While an approval is open (pendingRequests) nothing is typed; once it is
// resolved, the continuation goes in.
func TestMuseOpenApprovalBlocksTyping(t *testing.T) {
	m := startMuse(t, "provider-failure-turn", museFailedLines,
		"-approval", samples.Dir("muse", "approval-round-trip.transcript.ndjson"))
	m.eventually("the retry is scheduled", 15*time.Second, func() bool { return m.state() == "retrying" })
	pid := m.museAgentPID()
	must(t, syscall.Kill(pid, syscall.SIGUSR1)) // the approval opens
	m.eventually("nudge waits for the approval", 10*time.Second, func() bool { return m.state() == "waiting_box" })
	m.never("typing into the open approval", 4*time.Second, func() bool { return len(m.receivedLines()) > 0 })
	must(t, syscall.Kill(pid, syscall.SIGUSR2)) // the person decides
	m.eventually("the continuation after the approval", 15*time.Second, func() bool { return m.continuations() == 1 })
}

// A usage window at 100 % makes the failed turn a usage limit with the
// window's reset time; nothing is typed. The window and the turn it killed
// may reach nudge in one host answer or in two, in either order: the limit
// is told once, with the dead turn's text unless the window was told first
// (then the dead turn's text is in the timeline; docs/behaviour.md §5).
// "window first" holds the transcript back until the window alone is told.
func TestMuseUsageWindowIsUsageLimit(t *testing.T) {
	t.Run("together", func(t *testing.T) { museUsageWindow(t, false) })
	t.Run("window first", func(t *testing.T) { museUsageWindow(t, true) })
}

func museUsageWindow(t *testing.T, windowFirst bool) {
	args := []string{"-usage-reset-in", "90m"}
	hold := filepath.Join(t.TempDir(), "go-on")
	if windowFirst {
		args = append(args, "-hold", hold)
	}
	m := startMuse(t, "provider-failure-turn", museFailedLines, args...)
	if windowFirst {
		m.eventually("the window told alone", 20*time.Second, func() bool { return len(m.inbox()) == 1 })
		must(t, os.WriteFile(hold, nil, 0o600))
	}
	var reset *time.Time
	m.eventually("the usage limit with its reset time", 20*time.Second, func() bool {
		ss := m.sessions()
		if len(ss) == 1 && ss[0].State == "usage_limit" {
			reset = ss[0].ResetAt
		}
		return reset != nil
	})
	if d := time.Until(*reset); d < 85*time.Minute || d > 91*time.Minute {
		t.Errorf("reset at %v (in %v), want about 90 minutes ahead", reset, d)
	}
	var tl museTimeline
	m.eventually("the dead turn", 20*time.Second, func() bool {
		tl = m.timeline()
		return tl.deadTurn() != ""
	})
	if got := tl.deadTurn(); !strings.Contains(got, "503") {
		t.Errorf("dead turn %q, want a usage limit with Muse's 503 text", got)
	}
	m.never("typing a continuation", 6*time.Second, func() bool { return len(m.receivedLines()) > 0 })
	es := m.inbox()
	if len(es) > 0 {
		t.Logf("told as %q", es[0].ErrorText)
	}
	switch {
	case len(es) != 1 || es[0].Class != "usage_limit":
		t.Errorf("inbox %+v, want one usage-limit entry", es)
	case windowFirst && strings.Contains(es[0].ErrorText, "503"):
		t.Errorf("inbox %+v, want the window's entry: it was told first", es)
	case strings.Contains(es[0].ErrorText, "503"):
	case !strings.HasPrefix(es[0].ErrorText, "Muse usage window exhausted until "):
		t.Errorf("inbox %+v, want the dead turn's text or the usage window's", es)
	case !m.timeline().decided("the dead turn is the same limit, not told again", "provider returned 503"):
		t.Errorf("the window was told first, but the timeline lacks the dead turn's text: %+v", m.timeline().Decisions)
	}
}

// museTimeline is what `nudge explain --json` says about the one session.
type museTimeline struct {
	Events []struct {
		Kind, Class, Message string
	}
	Decisions []struct{ What string }
}

func (m *museRun) timeline() museTimeline {
	m.t.Helper()
	out, err := m.nudge("explain", "--json", museSession)
	must(m.t, err)
	var tl museTimeline
	must(m.t, json.Unmarshal(out, &tl))
	return tl
}

// deadTurn is the message of the first usage-limit dead turn, if any.
func (tl museTimeline) deadTurn() string {
	for _, e := range tl.Events {
		if e.Kind == "turn_failed" && e.Class == "usage_limit" {
			return e.Message
		}
	}
	return ""
}

// decided tells whether one decision says all the parts.
func (tl museTimeline) decided(parts ...string) bool {
	for _, d := range tl.Decisions {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(d.What, p)
		}
		if all {
			return true
		}
	}
	return false
}
