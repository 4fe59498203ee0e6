//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/fakeanthropic"
	"nudge/e2e/fakeresponses"
	"nudge/internal/dbustest"
	"nudge/internal/testenv"
)

// TestRealTwoProvidersTwoOutages runs two real Claude Code sessions against
// one fake Anthropic API and two real Codex sessions beside them against
// a fake Responses API (Codex's model_provider "fake"), both failing every
// request for a while: they are two outages, each told once when it costs
// and once when it ends, and every session recovers.
func TestRealTwoProvidersTwoOutages(t *testing.T) {
	claude := claudeCLI.need(t)
	codex := codexCLI.need(t)
	tmux := testenv.Need(t, "tmux")
	bus := dbustest.StartBus(t)
	notes := dbustest.Record(t, bus)
	w := newClaudeWorld(t)
	// Two prompts and the probe's first two continuations fail, per provider.
	fails := []string{"500", "500", "500", "500"}
	_, anthropicURL := serveFake(w, fakeanthropic.New, fails)
	_, responsesURL := serveFake(w, fakeresponses.New, fails)
	cx := &codexRun{t: t, w: w, home: filepath.Join(w.home, ".codex")}
	cx.writeConfig(responsesURL)
	// Each Codex in a folder of its own: nudge never guesses between two
	// Codex processes of one folder.
	var dirs []string
	for _, name := range []string{"api", "web"} {
		dir := filepath.Join(w.project, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	trust, err := os.OpenFile(filepath.Join(cx.home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		fmt.Fprintf(trust, "\n[projects.%q]\ntrust_level = \"trusted\"\n", dir)
	}
	trust.Close()
	d := w.startDaemon("NUDGE_NOTIFY_DESKTOP=true", "DBUS_SESSION_BUS_ADDRESS="+bus)

	cenv := append(w.claudeEnv(anthropicURL), "TERM=xterm-256color")
	xenv := append(w.baseEnv(), "TERM=xterm-256color", "CODEX_HOME="+cx.home, "OPENAI_API_KEY=dummy")
	t.Cleanup(func() { cx.stopAppServer(codex, xenv) })
	first := w.startPane(tmux, 200, 50, cenv, claude, "--session-id", outageIDs[0])
	panes := []*pane{first, first.beside("cc2", w.project, 200, 50, cenv, claude, "--session-id", outageIDs[1]),
		first.beside("cx1", dirs[0], 200, 50, xenv, codex), first.beside("cx2", dirs[1], 200, 50, xenv, codex)}
	for i, p := range panes {
		ready := "\n❯"
		if i >= 2 {
			ready = "› Ask Codex to do anything"
		}
		p.waitScreen("the prompt", func(s string) bool { return strings.Contains(s, ready) })
	}
	w.step("four prompts on screen")
	for i, p := range panes {
		echo := "❯ hello"
		if i >= 2 {
			echo = "› hello"
		}
		p.typeLine("hello", echo)
	}
	w.step("four prompts sent")

	type session struct{ Agent, Session, State string }
	var last string
	waitFor(t, "every session finished", 150*time.Second, func() (bool, string) {
		last = d.cli("status", "--json")
		var st struct{ Sessions []session }
		if json.Unmarshal([]byte(last), &st) != nil {
			return false, last
		}
		done := 0
		for _, s := range st.Sessions {
			if s.State == "finished" {
				done++
			}
		}
		return done == 4 && len(st.Sessions) == 4, last + "\n" + d.cli("outages", "--json")
	})
	w.step("every session finished")
	time.Sleep(6 * time.Second)

	var outages []struct {
		Provider string
		End      time.Time
		Sessions []struct {
			Key struct{ Agent, Session string }
		}
	}
	out := d.cli("outages", "--json")
	if err := json.Unmarshal([]byte(out), &outages); err != nil || len(outages) != 2 {
		t.Fatalf("nudge outages --json: %v\n%s", err, out)
	}
	byProvider := map[string]int{}
	for _, o := range outages {
		byProvider[o.Provider] = len(o.Sessions)
		if o.End.IsZero() {
			t.Errorf("the outage of %s did not end", o.Provider)
		}
	}
	if byProvider["anthropic"] != 2 || byProvider["fake"] != 2 {
		t.Errorf("outages %v, want two sessions on anthropic and two on fake", byProvider)
	}

	var told []string
	for {
		select {
		case n := <-notes.Notifications():
			told = append(told, n.Summary)
			continue
		default:
		}
		break
	}
	count := func(prefix string) int {
		n := 0
		for _, s := range told {
			if strings.HasPrefix(s, prefix) {
				n++
			}
		}
		return n
	}
	if len(told) != 4 || count("Anthropic failing since") != 1 || count("Anthropic is back") != 1 ||
		count("fake failing since") != 1 || count("fake is back") != 1 {
		t.Errorf("notifications %q, want each outage's start and end once", told)
	}
	var st struct{ Sessions []session }
	json.Unmarshal([]byte(last), &st)
	for _, s := range st.Sessions {
		if n := len(d.attemptsOf(s.Session)); n > 3 {
			t.Errorf("%s %s: %d continuations", s.Agent, s.Session, n)
		}
	}
	t.Logf("outages: %s", fmt.Sprint(byProvider))
}
