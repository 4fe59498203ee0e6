//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/fakeanthropic"
	"nudge/internal/dbustest"
	"nudge/internal/testenv"
)

// outageIDs are the sessions of the outage test, the first the probe.
var outageIDs = []string{sessionID, "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"}

// transcriptOf is the transcript of session id in the world.
func (w *world) transcriptOf(id string) []record {
	files, _ := filepath.Glob(filepath.Join(w.home, ".claude", "projects", "*", id+".jsonl"))
	if len(files) == 0 {
		return nil
	}
	return readRecords(files[0])
}

// attemptsOf are the continuations nudge stored for session id.
func (d *daemon) attemptsOf(id string) []struct {
	Attempt int
	Status  string
	Started time.Time
} {
	d.w.t.Helper()
	var tl struct {
		Attempts []struct {
			Attempt int
			Status  string
			Started time.Time
		}
	}
	out := d.cli("explain", id, "--json")
	if err := json.Unmarshal([]byte(out), &tl); err != nil {
		d.w.t.Fatalf("nudge explain %s --json: %v\n%s", id, err, out)
	}
	return tl.Attempts
}

// TestRealClaudeOutage runs the real Claude Code CLI in three tmux
// sessions against one fake Messages API that fails every request until
// the outage has lasted a whole retry ladder, then recovers: nudge tells
// the outage once when it starts to cost and once when it ends, only the
// first session (the probe) is continued during it, the others wait and
// are continued five seconds apart once the probe's turn completes, every
// session recovers and none gets more than three continuations.
func TestRealClaudeOutage(t *testing.T) { realOutage(t, false) }

// TestRealClaudeOutageKilled is the same outage with the daemon killed
// (SIGKILL) while the sessions wait and again between the continuations
// after it: nothing is continued twice, nothing is lost, the outage is
// told as once.
func TestRealClaudeOutageKilled(t *testing.T) { realOutage(t, true) }

// kill ends the daemon with SIGKILL, as a crash would, and starts it
// again with env.
func (d *daemon) kill(env ...string) *daemon {
	d.w.t.Helper()
	var st struct{ Daemon struct{ PID int } }
	if out := d.cli("status", "--json"); json.Unmarshal([]byte(out), &st) != nil || st.Daemon.PID == 0 {
		d.w.t.Fatalf("no daemon pid in %s", out)
	}
	if err := syscall.Kill(st.Daemon.PID, syscall.SIGKILL); err != nil {
		d.w.t.Fatal(err)
	}
	<-d.exited
	d.w.step("daemon killed")
	return d.w.startDaemon(env...)
}

func realOutage(t *testing.T, kill bool) {
	claude := claudeCLI.need(t)
	tmux := testenv.Need(t, "tmux")
	bus := dbustest.StartBus(t)
	notes := dbustest.Record(t, bus)
	w := newClaudeWorld(t)
	// The three prompts and the probe's first two continuations fail: the
	// probe's third comes after the outage outlasted the ladder (2+3+4 s),
	// when each session would have given up on its own.
	srv, baseURL := serveFake(w, fakeanthropic.New, []string{"500", "500", "500", "500", "500"})
	pushes := receivePushes(t)
	denv := []string{"NUDGE_NOTIFY_DESKTOP=true", "DBUS_SESSION_BUS_ADDRESS=" + bus, "NUDGE_NOTIFY_NTFY_URL=" + pushes.url}
	d := w.startDaemon(denv...)

	env := append(w.claudeEnv(baseURL), "TERM=xterm-256color")
	panes := []*pane{w.startPane(tmux, 200, 50, env, claude, "--session-id", outageIDs[0])}
	for i, id := range outageIDs[1:] {
		panes = append(panes, panes[0].beside(fmt.Sprintf("cc%d", i+2), w.project, 200, 50, env, claude, "--session-id", id))
	}
	for _, p := range panes {
		p.waitScreen("prompt", func(screen string) bool { return strings.Contains(screen, "\n❯") })
	}
	w.step("three prompts on screen")
	for i, p := range panes {
		p.typeLine("hello", "❯ hello")
		waitFor(t, "the 500 record of session "+fmt.Sprint(i+1), 60*time.Second, func() (bool, string) {
			recs := w.transcriptOf(outageIDs[i])
			return indexOf(recs, 0, isAPIError(500)) >= 0, summarize(recs)
		})
	}
	w.step("three sessions failed")
	if kill {
		// While the others wait, between two of the probe's continuations:
		// its first failed again and the second is planned.
		waitFor(t, "the others waiting and the probe's second continuation planned", 30*time.Second, func() (bool, string) {
			out := d.cli("status", "--json")
			as := d.attemptsOf(outageIDs[0])
			a, _ := sessionIn(out, "claude", outageIDs[0])
			b, _ := sessionIn(out, "claude", outageIDs[1])
			c, _ := sessionIn(out, "claude", outageIDs[2])
			return len(as) == 1 && a.State == "retrying" && b.State == "waiting_provider" && c.State == "waiting_provider", out
		})
		d = d.kill(denv...)
		// Between the continuations after the outage.
		waitFor(t, "the first waiting session continued", 60*time.Second, func() (bool, string) {
			as := d.attemptsOf(outageIDs[1])
			return len(as) == 1 && as[0].Status == "sent", d.cli("status", "--json")
		})
		if len(d.attemptsOf(outageIDs[2])) == 0 {
			d = d.kill(denv...)
		} else {
			t.Log("the second waiting session was continued before the daemon could be killed between the two")
		}
	}

	for i, id := range outageIDs {
		waitFor(t, "session "+fmt.Sprint(i+1)+" recovered", 90*time.Second, func() (bool, string) {
			recs := w.transcriptOf(id)
			missing := recoveredTurn(recs)
			return missing == "", "missing: " + missing + "\n" + summarize(recs) + "\n" + d.cli("status", "--json")
		})
	}
	w.step("every session recovered")
	time.Sleep(6 * time.Second) // a continuation or a notification too many would come within one spacing

	var told []string
	for len(told) < 3 {
		select {
		case n := <-notes.Notifications():
			told = append(told, n.Summary)
			continue
		default:
		}
		break
	}
	if len(told) != 2 || !strings.HasPrefix(told[0], "Anthropic failing since ") || !strings.HasSuffix(told[0], "· 2 sessions waiting") ||
		told[1] != "Anthropic is back; 3 sessions continued" {
		t.Errorf("notifications %q, want one when the outage costs and one when it ends", told)
	}
	if got := pushes.titles(); len(got) != 2 || got[0] != told[0] || got[1] != told[len(told)-1] {
		t.Errorf("phone pushes %q, want the two notifications", got)
	}

	probe := w.transcriptOf(outageIDs[0])
	back := probe[indexOf(probe, 0, func(r record) bool { return r.Type == "assistant" && r.Message.StopReason == "end_turn" })].Timestamp
	if n := len(d.attemptsOf(outageIDs[0])); n != 3 {
		t.Errorf("the probe got %d continuations, want 3", n)
	}
	var started []time.Time
	for _, id := range outageIDs[1:] {
		as := d.attemptsOf(id)
		if len(as) != 1 || as[0].Status != "sent" {
			t.Fatalf("session %s: continuations %+v, want one sent after the outage", id, as)
		}
		if as[0].Started.Before(back) {
			t.Errorf("session %s continued at %v, during the outage (the probe's turn completed at %v)", id, as[0].Started, back)
		}
		started = append(started, as[0].Started)
	}
	gap := started[1].Sub(started[0])
	t.Logf("the waiting sessions were continued %v apart", gap)
	if gap < 4*time.Second && !kill {
		t.Errorf("the waiting sessions were continued %v apart, want the 5 s spacing", gap)
	}
	if main := srv.Main(); len(main) != 8 {
		t.Errorf("main-loop requests %d, want 3 prompts and 5 continuations", len(main))
	}

	var outages []struct {
		Provider string
		End      time.Time
		GaveUp   bool `json:"gave_up"`
		Sessions []json.RawMessage
	}
	out := d.cli("outages", "--json")
	if err := json.Unmarshal([]byte(out), &outages); err != nil || len(outages) != 1 || outages[0].Provider != "anthropic" ||
		outages[0].End.IsZero() || outages[0].GaveUp || len(outages[0].Sessions) != 3 {
		t.Errorf("nudge outages --json: %v\n%s", err, out)
	}
}

// pushReceiver is an ntfy topic on loopback that keeps the title of each
// push it is sent.
type pushReceiver struct {
	url string
	mu  sync.Mutex
	got []string
}

func receivePushes(t *testing.T) *pushReceiver {
	r := &pushReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		title, err := new(mime.WordDecoder).DecodeHeader(req.Header.Get("Title"))
		if err != nil {
			title = req.Header.Get("Title")
		}
		r.mu.Lock()
		r.got = append(r.got, title)
		r.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/nudge-e2e"
	return r
}

func (r *pushReceiver) titles() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}
