//go:build torture

package torture

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/testenv"
)

// continuation is the text the daemon types in the retry-on suite.
const continuation = "torture: the last attempt failed with a provider error; continue where you left off"

// episodes are the scripts a person's prompt gives the stand-in: the
// outcome of the prompt, then of each continuation.
var episodes = [][]string{
	{"500", "ok"},
	{"500", "500", "ok"},
	{"500", "500", "500", "ok"},
	{"500", "500", "500", "500"}, // nudge gives up after 3
	{"limit"},                    // told, never continued
	{"ok"},
}

// agent is one stand-in session in a tmux window.
type agent struct {
	name     string
	session  string
	received string
	window   string
	scripts  [][]string // the episodes typed so far
}

// lines are what the agent received, one line each.
func (a *agent) lines() []string {
	b, _ := os.ReadFile(a.received)
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// episode is what one person's prompt led to, replayed from what the agent
// received: the continuations it got and whether one of them was answered
// by a completed turn.
type episode struct {
	script        []string
	continuations int
	recovered     bool // a continuation got an ok
	dead          bool // the prompt itself died
}

// replay splits what the agent received into episodes: a line ending in a
// script is a person's prompt (a continuation left unsent in the prompt may
// sit glued in front of it and counts for the episode before).
func (a *agent) replay() []episode {
	var eps []episode
	var queue []string
	for _, line := range a.lines() {
		if i := strings.LastIndexByte(line, '['); i >= 0 && strings.HasSuffix(line, "]") {
			if n := strings.Count(line, continuation); n > 0 && len(eps) > 0 {
				eps[len(eps)-1].continuations += n
			}
			queue = strings.Split(line[i+1:len(line)-1], ",")
			eps = append(eps, episode{script: slices.Clone(queue), dead: queue[0] != "ok"})
			queue = queue[1:]
			continue
		}
		if len(eps) == 0 {
			continue
		}
		ep := &eps[len(eps)-1]
		ep.continuations += strings.Count(line, continuation)
		outcome := "ok"
		if len(queue) > 0 {
			outcome, queue = queue[0], queue[1:]
		}
		if outcome == "ok" {
			ep.recovered = true
		}
	}
	return eps
}

// TestCrashRetryOn: stand-in agents in real tmux fail with provider errors
// and usage limits; nudge retries them while it is killed with SIGKILL at
// random points. No attempt is typed twice, no dead turn gets more than 3,
// and every dead turn is recovered or told (exactly once).
func TestCrashRetryOn(t *testing.T) {
	testenv.Need(t, "tmux")
	k := scale(t)
	w := newWorld(t, "NUDGE_RETRY_DELAYS=1s,1s,1s", "NUDGE_RETRY_MESSAGE="+continuation,
		"NUDGE_RETRY_BOX_FIRST_CHECK=500ms", "NUDGE_RETRY_BOX_MAX_GAP=1s")
	sock := filepath.Join(w.dir, "tmux.sock")
	project := filepath.Join(w.home, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	tmux := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	w.start(true)

	var agents []*agent
	for i := range 6 {
		a := &agent{name: fmt.Sprintf("agent%d", i), session: fmt.Sprintf("%08d-1111-4111-8111-%012d", i, i),
			received: filepath.Join(w.dir, fmt.Sprintf("received%d.log", i))}
		cmd := strings.Join([]string{daemontest.Bin(standin), "-session", a.session, "-received", a.received}, " ")
		args := []string{"-f", "/dev/null"}
		if i == 0 {
			args = append(args, "new-session", "-d", "-s", "torture", "-n", a.name, "-x", "200", "-y", "50", "-c", project)
		} else {
			args = append(args, "new-window", "-d", "-t", "torture", "-n", a.name, "-c", project)
		}
		for _, kv := range w.env {
			args = append(args, "-e", kv)
		}
		tmux(append(args, cmd)...)
		a.window = "torture:" + a.name
		agents = append(agents, a)
	}
	daemontest.Eventually(t, "the stand-ins registered", 10*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(w.home, ".claude", "sessions", "*.json"))
		return len(m) == len(agents)
	})

	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	perAgent := 6 * k
	// told counts the Inbox entries of each session.
	told := func() map[string]int { return w.counts("SELECT session, count(*) FROM entries GROUP BY session") }
	// resolved: the agent's last episode was recovered, needed nothing, or
	// was told; a person types the next prompt only then (a prompt typed
	// into a pending retry would cancel it: the person stepped in).
	resolved := func(a *agent, entries map[string]int) bool {
		eps := a.replay()
		switch {
		case len(a.scripts) == 0:
			return true
		case len(eps) < len(a.scripts):
			return false // the last prompt has not arrived yet
		}
		notRecovered := 0
		for _, ep := range eps {
			if ep.dead && !ep.recovered {
				notRecovered++
			}
		}
		last := eps[len(eps)-1]
		return !last.dead || last.recovered || entries[a.session] >= notRecovered
	}
	typePrompt := func(a *agent) {
		script := episodes[rnd.IntN(len(episodes))]
		a.scripts = append(a.scripts, script)
		tmux("send-keys", "-t", a.window, "-l", "--", fmt.Sprintf("task %d [%s]", len(a.scripts), strings.Join(script, ",")))
		tmux("send-keys", "-t", a.window, "Enter")
	}
	drive := func(until time.Time) (done bool) {
		for time.Now().Before(until) {
			entries := told()
			done = true
			for _, a := range agents {
				if !resolved(a, entries) {
					done = false
					continue
				}
				if len(a.scripts) < perAgent {
					done = false
					typePrompt(a)
				}
			}
			if done {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}
	for range 12 * k {
		drive(time.Now().Add(time.Duration(500+rnd.IntN(2500)) * time.Millisecond))
		w.kill()
		time.Sleep(time.Duration(rnd.IntN(500)) * time.Millisecond)
		w.start(false)
	}
	w.daemon.WaitReady(t)
	if !drive(time.Now().Add(3 * time.Minute)) {
		t.Error("not every dead turn was recovered or told within 3 minutes")
	}
	time.Sleep(2 * time.Second) // a late attempt would be a second one
	entries := told()
	attempts := w.counts("SELECT session || ' ' || episode || ' ' || attempt, count(*) FROM attempts GROUP BY session, episode, attempt")
	perSession := w.counts("SELECT session, count(*) FROM attempts GROUP BY session")
	maxAttempt := w.counts("SELECT 'max', max(attempt) FROM attempts")
	interrupted := w.counts("SELECT 'n', count(*) FROM attempts WHERE reason LIKE 'nudge stopped%'")["n"]
	// A kill between paste and Enter leaves the continuation in the prompt:
	// told once (its dead turn's one entry), never sent by nudge's Enter.
	leftovers := w.counts("SELECT 'n', count(*) FROM attempts WHERE reason LIKE 'nudge stopped after pasting%'")["n"]
	leftoversTold := w.counts("SELECT 'n', count(*) FROM entries WHERE what LIKE 'nudge stopped after pasting%'")["n"]
	why := w.counts("SELECT substr(what, 1, instr(what || ';', ';') - 1), count(*) FROM entries GROUP BY 1")
	w.quit()

	var dead, recovered, toldN, typed, twice, over3 int
	for _, a := range agents {
		eps := a.replay()
		if len(eps) != len(a.scripts) {
			t.Errorf("%s: %d prompts typed, %d arrived", a.name, len(a.scripts), len(eps))
		}
		notRecovered, conts := 0, 0
		for i, ep := range eps {
			conts += ep.continuations
			if ep.continuations > 3 {
				over3++
				t.Errorf("%s episode %d %v: %d continuations", a.name, i+1, ep.script, ep.continuations)
			}
			if !ep.dead {
				continue
			}
			dead++
			if ep.recovered {
				recovered++
			} else {
				notRecovered++
			}
		}
		typed += conts
		toldN += entries[a.session]
		if conts > perSession[a.session] {
			twice++
			t.Errorf("%s: %d continuations typed for %d attempts: one was typed twice", a.name, conts, perSession[a.session])
		}
		if entries[a.session] != notRecovered {
			t.Errorf("%s: %d dead turns neither recovered nor continued to success, %d Inbox entries: want one each", a.name, notRecovered, entries[a.session])
		}
	}
	for key, n := range attempts {
		if n != 1 {
			t.Errorf("attempt %s in the ledger %d times", key, n)
		}
	}
	if maxAttempt["max"] > 3 {
		t.Errorf("an attempt number %d: never more than 3", maxAttempt["max"])
	}
	if leftoversTold != leftovers {
		t.Errorf("%d continuations left in a prompt by a kill, %d told: want each told once", leftovers, leftoversTold)
	}
	t.Logf("%d continuations left unsent in a prompt by a kill between paste and Enter, each told once", leftovers)
	t.Logf("retry on: %d kills (%d of them cut a delivery); %d stand-ins, %d episodes with a dead turn: %d recovered, %d told; %d continuations typed for %d attempts; %d typed twice, %d over 3",
		w.kills, interrupted, len(agents), dead, recovered, toldN, typed, len(attempts), twice, over3)
	t.Logf("told: %v", why)
}
