//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/fakechat"
	"nudge/internal/classify"
	"nudge/internal/testenv"
)

// copilotCLI is the known-good GitHub Copilot CLI .ci/install-agents.sh
// installs (docs/agents/copilot.md §1, §9).
var copilotCLI = agentCLI{name: "GitHub Copilot CLI", env: "NUDGE_E2E_COPILOT", install: "copilot", version: "1.0.102",
	bin: filepath.Join("node_modules", ".bin", "copilot")}

// copilotAttempts is how many requests the CLI makes for one failing
// model call: the first and its 5 retries (docs/agents/copilot.md §5).
const copilotAttempts = 6

// TestRealCopilotRecovers runs Copilot CLI in a tmux pane, offline against
// a fake chat-completions provider that answers every one of the CLI's own
// attempts with a 500, or drops the connection, and checks that nudge types
// its continuation once and the next turn is answered.
func TestRealCopilotRecovers(t *testing.T) {
	for _, c := range []struct{ mode, text string }{
		{"500", "500 fake internal server error"}, {fakechat.ModeDrop, "connection closed"},
	} {
		t.Run(c.mode, func(t *testing.T) { copilotRecovers(t, c.mode, c.text) })
	}
}

// copilotRecovers is TestRealCopilotRecovers for one mode, whose error
// message holds text.
func copilotRecovers(t *testing.T, mode, text string) {
	c := startCopilot(t, repeat(mode, copilotAttempts)...)
	c.send("hello")
	c.waitTurns("the failed turn", func(ts []copilotTurn) bool {
		return len(ts) >= 1 && ts[0].End == "session.error" && strings.Contains(ts[0].Content, text)
	})
	c.waitTurns("the continuation answered", func(ts []copilotTurn) bool {
		return len(ts) >= 2 && ts[1].Text == continuation && ts[1].End == "assistant.message"
	})
	// A second continuation would come one retry delay (3 s) after the first.
	time.Sleep(5 * time.Second)
	if ts := c.turns(); len(ts) != 2 {
		t.Errorf("turns = %+v, want the failed one and one continuation", ts)
	}
	var modes []string
	for _, r := range c.srv.Main() {
		modes = append(modes, r.Mode)
	}
	main := c.srv.Main()
	if strings.Join(modes, ",") != strings.Join(append(repeat(mode, copilotAttempts), "ok"), ",") ||
		!strings.HasSuffix(main[len(main)-1].LastUserText, continuation) {
		t.Errorf("main requests %+v, want %d × %s, then ok carrying the continuation", main, copilotAttempts, mode)
	}
	if st, ok := c.status(); !ok || st.State != "finished" {
		t.Errorf("status %+v (found %v), want finished", st, ok)
	}
}

// TestRealCopilotInScreenAndWrapRecovers is TestRealCopilotRecovers with
// the CLI in a GNU screen window and inside `nudge wrap`: the continuation
// is typed there, read back from the window's hardcopy or seen by the
// wrapper.
func TestRealCopilotInScreenAndWrapRecovers(t *testing.T) {
	for _, via := range []string{"screen", "wrap"} {
		t.Run(via, func(t *testing.T) {
			c := startCopilotIn(t, via, repeat("500", copilotAttempts)...)
			c.send("hello")
			c.waitTurns("the failed turn", func(ts []copilotTurn) bool { return len(ts) >= 1 && ts[0].End == "session.error" })
			c.waitTurns("the continuation answered", func(ts []copilotTurn) bool {
				return len(ts) == 2 && ts[1].Text == continuation && ts[1].End == "assistant.message"
			})
			c.d.sentOnceThrough(t, c.session(), via)
		})
	}
}

// TestRealCopilotUsageLimitNotRetried: an insufficient_quota 429, which the
// CLI retries 5 times itself, is a usage limit, and nudge types nothing
// (docs/agents/copilot.md §4).
func TestRealCopilotUsageLimitNotRetried(t *testing.T) {
	c := startCopilot(t, repeat("429-quota", copilotAttempts)...)
	c.send("hello")
	// Its own retries of a 429 without Retry-After take about 53 s (§5).
	waitTurns(c.w, "the quota failure", 120*time.Second, c.turns, func(ts []copilotTurn) bool {
		return len(ts) == 1 && ts[0].End == "session.error" && strings.Contains(ts[0].Content, "quota")
	})
	waitFor(t, "status usage_limit", 15*time.Second, func() (bool, string) {
		st, _ := c.status()
		return st.State == "usage_limit", c.d.cli("status", "--json")
	})
	c.w.step("status usage_limit")
	c.noContinuation()
	entries := c.d.inbox()
	if len(entries) != 1 || entries[0].Class != "usage_limit" || entries[0].Agent != "copilot" ||
		!strings.Contains(entries[0].What, "usage limit") || !strings.Contains(entries[0].ErrorText, "exceeded your current quota") {
		t.Errorf("inbox %+v, want one usage_limit entry with the CLI's quota message", entries)
	}
}

// TestRealCopilotAuthToldOnce: a 401 from the provider is told once (one
// Inbox entry with the sign-in hint) and never retried by nudge.
func TestRealCopilotAuthToldOnce(t *testing.T) {
	c := startCopilot(t, repeat("401", copilotAttempts)...)
	c.send("hello")
	c.waitTurns("the auth failure", func(ts []copilotTurn) bool {
		return len(ts) == 1 && ts[0].End == "session.error" && strings.Contains(ts[0].Content, "HTTP 401")
	})
	waitFor(t, "status needs_signin", 15*time.Second, func() (bool, string) {
		st, _ := c.status()
		return st.State == "needs_signin", c.d.cli("status", "--json")
	})
	c.w.step("status needs_signin")
	c.noContinuation()
	entries := c.d.inbox()
	if len(entries) != 1 || entries[0].Class != "auth" || entries[0].Agent != "copilot" ||
		!strings.Contains(entries[0].What, "COPILOT_PROVIDER_API_KEY") {
		t.Errorf("inbox %+v, want one auth entry naming COPILOT_PROVIDER_API_KEY", entries)
	}
}

// repeat is n copies of mode.
func repeat(mode string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = mode
	}
	return out
}

// copilotRun is one test's Copilot CLI, its fake provider and the daemon.
type copilotRun struct {
	t    *testing.T
	w    *world
	d    *daemon
	p    *pane          // the tmux pane it runs in (in `nudge wrap` there)
	s    *screenSession // or the GNU screen window
	srv  *fakechat.Server
	root string // ~/.copilot of the world
}

// startCopilot starts the fake provider with scenario, the daemon, and
// Copilot CLI in a tmux pane, at its empty prompt.
func startCopilot(t *testing.T, scenario ...string) *copilotRun {
	return startCopilotIn(t, "tmux", scenario...)
}

// startCopilotIn is startCopilot with the CLI in via (world.startIn).
func startCopilotIn(t *testing.T, via string, scenario ...string) *copilotRun {
	copilot := copilotCLI.need(t)
	tmux := testenv.Need(t, "tmux")
	w := newWorld(t)
	c := &copilotRun{t: t, w: w, root: filepath.Join(w.home, ".copilot")}
	srv, baseURL := serveFake(w, fakechat.New, scenario)
	c.srv = srv
	// docs/agents/copilot.md §9: the project is trusted, so no dialog asks.
	if err := os.MkdirAll(c.root, 0o700); err != nil {
		t.Fatal(err)
	}
	w.writeJSON(filepath.Join(c.root, "config.json"), map[string]any{"trustedFolders": []string{w.project}})

	// The daemon finds ~/.copilot through HOME (agents.copilot.root is "").
	c.d = w.startDaemon()

	w.showOnFailure("turns", func() any { return fmt.Sprintf("%+v", c.turns()) })
	env := append(w.baseEnv(), "TERM=xterm-256color",
		"COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL="+baseURL+"/v1", "COPILOT_PROVIDER_API_KEY=fake-key",
		"COPILOT_MODEL="+fakechat.ModelID, "NO_PROXY=127.0.0.1,localhost")
	c.p, c.s = w.startIn(via, tmux, env, copilot)
	waitFor(t, "the empty prompt", 30*time.Second, func() (bool, string) {
		screen := c.screen()
		a, _ := classify.Lookup("copilot")
		return a.ReadComposer(screen, classify.Caret{}).Empty(), screen
	})
	w.step("Copilot CLI at its prompt in " + via)
	return c
}

// screen is what the CLI's terminal shows (screen's hardcopy: one byte per cell).
func (c *copilotRun) screen() string {
	if c.s != nil {
		return c.s.screen()
	}
	return c.p.screen()
}

// send types text at the prompt and submits it; "❯" shows as "o" in
// screen's hardcopy.
func (c *copilotRun) send(text string) {
	c.t.Helper()
	if c.s != nil {
		c.s.typeLine(text, "o "+text)
		return
	}
	c.p.typeLine(text, "❯ "+text)
}

// log is the session's event log ("" before the CLI made it).
func (c *copilotRun) log() string {
	files, _ := filepath.Glob(filepath.Join(c.root, "session-state", "*", "events.jsonl"))
	if len(files) == 1 {
		return files[0]
	}
	return ""
}

// session is the session folder's name (docs/agents/copilot.md §1).
func (c *copilotRun) session() string { return filepath.Base(filepath.Dir(c.log())) }

// copilotTurn is a person's message and the event that ended its turn.
type copilotTurn struct {
	Text    string
	End     string // "assistant.message", "session.error", "abort"; "" while open
	Content string // the answer's or the error's text
}

// turns reads the event log (docs/agents/copilot.md §2, §3).
func (c *copilotRun) turns() []copilotTurn {
	data, err := os.ReadFile(c.log())
	if err != nil {
		return nil
	}
	var turns []copilotTurn
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e struct {
			Type string
			Data struct {
				Content, Message string
				ToolRequests     []json.RawMessage
			}
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		open := len(turns) > 0 && turns[len(turns)-1].End == ""
		switch {
		case e.Type == "user.message":
			turns = append(turns, copilotTurn{Text: e.Data.Content})
		case open && e.Type == "assistant.message" && len(e.Data.ToolRequests) == 0:
			turns[len(turns)-1].End, turns[len(turns)-1].Content = e.Type, e.Data.Content
		case open && (e.Type == "session.error" || e.Type == "abort"):
			turns[len(turns)-1].End, turns[len(turns)-1].Content = e.Type, e.Data.Message
		}
	}
	return turns
}

func (c *copilotRun) waitTurns(what string, ok func([]copilotTurn) bool) {
	c.t.Helper()
	waitTurns(c.w, what, 90*time.Second, c.turns, ok)
}

// noContinuation waits past the daemon's retry delays and checks nudge
// typed nothing: one turn, and no request at the fake after the CLI's own
// attempts, all made before it recorded the failure.
func (c *copilotRun) noContinuation() {
	c.t.Helper()
	n := len(c.srv.Main())
	time.Sleep(6 * time.Second)
	if ts := c.turns(); len(ts) != 1 {
		c.t.Errorf("turns = %+v, want only the failed one", ts)
	}
	if m := c.srv.Main(); len(m) != n {
		c.t.Errorf("main requests = %+v, want the CLI's own %d", m, n)
	}
}

// status is the session's row in `nudge status --json`.
func (c *copilotRun) status() (sessionStatus, bool) {
	return sessionIn(c.d.cli("status", "--json"), "copilot", c.session())
}
