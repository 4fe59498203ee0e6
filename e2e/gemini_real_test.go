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

	"nudge/e2e/fakegemini"
	"nudge/internal/testenv"
)

// geminiCLI is the known-good Gemini CLI .ci/install-agents.sh installs
// (docs/agents/gemini.md §1, §9).
var geminiCLI = agentCLI{name: "Gemini CLI", env: "NUDGE_E2E_GEMINI", install: "gemini", version: "0.61.0",
	bin: filepath.Join("node_modules", ".bin", "gemini")}

// geminiPrompt is the empty prompt's placeholder (docs/agents/gemini.md §7).
const geminiPrompt = "Type your message or @path/to/file"

// TestRealGeminiRecovers runs Gemini CLI in a tmux pane against a fake
// Gemini API that answers each of the CLI's three attempts with a 500 or a
// 503 inside the stream (a plain 5xx the CLI retries without end,
// docs/agents/gemini.md §5), or drops the connection, and checks that nudge
// types its continuation once and the next turn is answered.
func TestRealGeminiRecovers(t *testing.T) {
	for _, c := range []struct{ mode, status string }{
		{"stream-500", "INTERNAL"}, {"stream-503", "UNAVAILABLE"}, {fakegemini.ModeDrop, "fetch failed"},
	} {
		t.Run(c.mode, func(t *testing.T) { geminiRecovers(t, c.mode, c.status) })
	}
}

// TestRealGeminiInScreenAndWrapRecovers is TestRealGeminiRecovers with a
// 503 in a GNU screen window and inside `nudge wrap`: the continuation is
// typed there, through that backend, once.
func TestRealGeminiInScreenAndWrapRecovers(t *testing.T) {
	for _, via := range []string{"screen", "wrap"} {
		t.Run(via, func(t *testing.T) {
			mode := "stream-503"
			g := startGeminiIn(t, via, mode, mode, mode)
			g.recovers(mode, "UNAVAILABLE")
			var tl struct {
				Attempts []struct{ Status, Backend string }
			}
			out := g.d.cli("explain", g.session(), "--json")
			if err := json.Unmarshal([]byte(out), &tl); err != nil || len(tl.Attempts) != 1 || tl.Attempts[0].Status != "sent" || tl.Attempts[0].Backend != via {
				t.Errorf("nudge explain: want one attempt sent through %s, got %s", via, out)
			}
		})
	}
}

// geminiRecovers is TestRealGeminiRecovers for one mode, whose error text
// carries status.
func geminiRecovers(t *testing.T, mode, status string) {
	startGemini(t, mode, mode, mode).recovers(mode, status)
}

// recovers types a first prompt, whose turn fails with mode three times
// (the error text carrying status), and checks that nudge continues it
// once and the continuation is answered.
func (g *geminiRun) recovers(mode, status string) {
	t := g.t
	g.term.typeLine("hello", "> hello")
	g.waitTurns("the failed turn", func(ts []geminiTurn) bool {
		return len(ts) >= 1 && ts[0].End == "error" && strings.Contains(ts[0].Content, status)
	})
	g.waitTurns("the continuation answered", func(ts []geminiTurn) bool {
		return len(ts) >= 2 && ts[1].Text == continuation && ts[1].End == "gemini"
	})
	// A second continuation would come one retry delay (3 s) after the first.
	time.Sleep(5 * time.Second)
	if ts := g.turns(); len(ts) != 2 {
		t.Errorf("turns = %+v, want the failed one and one continuation", ts)
	}
	var modes []string
	for _, r := range g.srv.Main() {
		modes = append(modes, r.Mode)
	}
	if main := g.srv.Main(); strings.Join(modes, ",") != strings.Repeat(mode+",", 3)+"ok" || main[3].LastUserText != continuation {
		t.Errorf("main requests %+v, want three %s, then ok carrying the continuation", main, mode)
	}
	if st, ok := g.status(); !ok || st.State != "finished" {
		t.Errorf("status %+v (found %v), want finished", st, ok)
	}
}

// TestRealGeminiUsageLimitNotRetried: a per-day quota opens the CLI's
// dialog; once the person answers "Stop" the turn is a usage limit and
// nudge types nothing (docs/agents/gemini.md §4, §6).
func TestRealGeminiUsageLimitNotRetried(t *testing.T) {
	g := startGemini(t, "429-quota")
	g.term.typeLine("hello", "> hello")
	g.p.waitScreen("the quota dialog", func(s string) bool {
		return strings.Contains(s, "Usage limit reached") && strings.Contains(s, "2. Stop")
	})
	g.w.step("the quota dialog")
	if ts := g.turns(); len(ts) != 1 || ts[0].End != "" {
		t.Errorf("turns with the dialog open = %+v, want one without an end", ts)
	}
	g.p.press("2")
	g.waitTurns("the quota failure", func(ts []geminiTurn) bool {
		return len(ts) == 1 && ts[0].End == "error" && strings.Contains(ts[0].Content, "quota")
	})
	waitFor(t, "status usage_limit", 15*time.Second, func() (bool, string) {
		st, _ := g.status()
		return st.State == "usage_limit", g.d.cli("status", "--json")
	})
	g.w.step("status usage_limit")
	noContinuation(t, 6*time.Second, g.turns, g.srv.Main)
}

// TestRealGeminiAuthToldOnce: a 401 is told once (one Inbox entry naming
// GEMINI_API_KEY) and never retried.
func TestRealGeminiAuthToldOnce(t *testing.T) {
	g := startGemini(t, "401")
	g.term.typeLine("hello", "> hello")
	g.waitTurns("the auth failure", func(ts []geminiTurn) bool {
		return len(ts) == 1 && ts[0].End == "error" && strings.Contains(ts[0].Content, "UNAUTHENTICATED")
	})
	waitFor(t, "status needs_signin", 15*time.Second, func() (bool, string) {
		st, _ := g.status()
		return st.State == "needs_signin", g.d.cli("status", "--json")
	})
	g.w.step("status needs_signin")
	noContinuation(t, 6*time.Second, g.turns, g.srv.Main)
	entries := g.d.inbox()
	if len(entries) != 1 || entries[0].Class != "auth" || entries[0].Agent != "gemini" ||
		!strings.Contains(entries[0].What, "GEMINI_API_KEY") {
		t.Errorf("inbox %+v, want one auth entry naming GEMINI_API_KEY", entries)
	}
}

// geminiRun is one test's Gemini CLI in its terminal, its fake API and the
// daemon.
type geminiRun struct {
	t    *testing.T
	w    *world
	d    *daemon
	p    *pane // the tmux pane, when the CLI runs in one
	term interface{ typeLine(text, echo string) }
	srv  *fakegemini.Server
	root string // ~/.gemini of the world
}

// startGemini starts the fake Gemini API with scenario, the daemon, and
// Gemini CLI in a tmux pane, at its empty prompt.
func startGemini(t *testing.T, scenario ...string) *geminiRun {
	return startGeminiIn(t, "tmux", scenario...)
}

// startGeminiIn is startGemini with the CLI in via: a tmux pane ("tmux"),
// a GNU screen window ("screen") or `nudge wrap` in a tmux pane ("wrap").
func startGeminiIn(t *testing.T, via string, scenario ...string) *geminiRun {
	gemini := geminiCLI.need(t)
	tmux := testenv.Need(t, "tmux")
	w := newWorld(t)
	g := &geminiRun{t: t, w: w, root: filepath.Join(w.home, ".gemini")}
	srv, baseURL := serveFake(w, fakegemini.New, scenario)
	g.srv = srv
	g.writeSettings()

	// The daemon finds ~/.gemini through HOME (agents.gemini.root is "").
	g.d = w.startDaemon()

	w.showOnFailure("chat turns", func() any { return fmt.Sprintf("%+v", g.turns()) })
	env := append(w.baseEnv(), "TERM=xterm-256color",
		"GEMINI_API_KEY=fake-key", "GOOGLE_GEMINI_BASE_URL="+baseURL, "NO_PROXY=127.0.0.1,localhost")
	atPrompt := func(s string) bool { return strings.Contains(s, geminiPrompt) }
	switch via {
	case "tmux":
		g.p = w.startPane(tmux, 160, 45, env, gemini)
	case "wrap":
		g.p = w.startPane(tmux, 160, 45, append(env, "NUDGE_DATA_DIR="+w.path("data")), w.nudge, "wrap", "--", gemini)
	case "screen":
		s := w.startScreen(testenv.Need(t, "screen"), env, gemini)
		s.waitScreen("the empty prompt", atPrompt)
		g.term = s
	default:
		t.Fatalf("no terminal %q", via)
	}
	if g.p != nil {
		g.p.waitScreen("the empty prompt", atPrompt)
		g.term = g.p
	}
	w.step("Gemini CLI at its prompt in " + via)
	return g
}

// writeSettings makes an unattended run: API key auth, no trust dialog,
// update check, statistics or IDE, a fixed model and three attempts per
// request (docs/agents/gemini.md §9).
func (g *geminiRun) writeSettings() {
	if err := os.MkdirAll(g.root, 0o700); err != nil {
		g.t.Fatal(err)
	}
	g.w.writeJSON(filepath.Join(g.root, "settings.json"), map[string]any{
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "maxAttempts": 3},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"model":     map[string]any{"name": fakegemini.ModelID, "skipNextSpeakerCheck": true},
		"ide":       map[string]any{"enabled": false, "hasSeenNudge": true},
		"ui":        map[string]any{"hideTips": true, "hideBanner": true},
	})
}

// chat is the session's chat file ("" before the CLI made it).
func (g *geminiRun) chat() string {
	files, _ := filepath.Glob(filepath.Join(g.root, "tmp", "*", "chats", "session-*.jsonl"))
	if len(files) == 1 {
		return files[0]
	}
	return ""
}

// session is the chat file's name without "session-" and ".jsonl"
// (docs/agents/gemini.md §1).
func (g *geminiRun) session() string {
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(g.chat()), "session-"), ".jsonl")
}

// geminiTurn is a person's message and the message that ended its turn.
type geminiTurn struct {
	Text    string
	End     string // "gemini", "error", "info"; "" while open
	Content string // the ending's text
}

// turns reads the chat's messages, the last line of each id winning
// (docs/agents/gemini.md §2, §3).
func (g *geminiRun) turns() []geminiTurn {
	data, err := os.ReadFile(g.chat())
	if err != nil {
		return nil
	}
	type message struct {
		ID, Type string
		Content  json.RawMessage
	}
	var order []string
	byID := map[string]message{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var m message
		if json.Unmarshal(line, &m) != nil || m.ID == "" {
			continue
		}
		if _, seen := byID[m.ID]; !seen {
			order = append(order, m.ID)
		}
		byID[m.ID] = m
	}
	var turns []geminiTurn
	for _, id := range order {
		m := byID[id]
		var text string
		var parts []struct{ Text string }
		if json.Unmarshal(m.Content, &parts) == nil {
			for _, p := range parts {
				text += p.Text
			}
		} else {
			json.Unmarshal(m.Content, &text)
		}
		switch {
		case m.Type == "user" && strings.HasPrefix(text, "<session_context>"): // the CLI's own
		case m.Type == "user":
			turns = append(turns, geminiTurn{Text: text})
		case len(turns) > 0 && turns[len(turns)-1].End == "" &&
			(m.Type == "gemini" && text != "" || m.Type == "error" || m.Type == "info" && text == "Request cancelled."):
			turns[len(turns)-1].End, turns[len(turns)-1].Content = m.Type, text
		}
	}
	return turns
}

func (g *geminiRun) waitTurns(what string, ok func([]geminiTurn) bool) {
	g.t.Helper()
	waitFor(g.t, what, 60*time.Second, func() (bool, string) {
		ts := g.turns()
		return ok(ts), fmt.Sprintf("%+v", ts)
	})
	g.w.step(what)
}

// status is the session's row in `nudge status --json`.
func (g *geminiRun) status() (sessionStatus, bool) {
	return sessionIn(g.d.cli("status", "--json"), "gemini", g.session())
}

// TestRealGeminiDeclinedApprovalIsCancelled: while Gemini CLI asks the
// person to approve a tool call the session is at work and nothing is
// typed; the person declining it (Esc) cancels the turn, which is never
// continued. The CLI's own context message that follows is not a new
// turn (docs/agents/gemini.md §3, §6).
func TestRealGeminiDeclinedApprovalIsCancelled(t *testing.T) {
	g := startGemini(t, fakegemini.ModeToolApprove)
	g.p.typeLine("hello", "> hello")
	g.p.waitScreen("the approval dialog", func(s string) bool { return strings.Contains(s, "Allow execution of") })
	g.w.step("the approval dialog")
	time.Sleep(3 * time.Second)
	if st, _ := g.status(); st.State != "working" {
		t.Errorf("with the approval dialog open the session is %q, want working", st.State)
	}
	g.p.press("Escape")
	g.waitTurns("the turn cancelled", func(ts []geminiTurn) bool {
		return len(ts) == 1 && ts[0].End == "info" && ts[0].Content == "Request cancelled."
	})
	waitFor(t, "status cancelled", 15*time.Second, func() (bool, string) {
		st, _ := g.status()
		return st.State == "cancelled", g.d.cli("status", "--json")
	})
	noContinuation(t, 6*time.Second, g.turns, g.srv.Main)
	if st, _ := g.status(); st.State != "cancelled" {
		t.Errorf("after the context message the session is %q, want still cancelled", st.State)
	}
}
