//go:build linux

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"nudge/internal/classify"
)

// TestRealCodexDraftHoldsTheContinuation: Codex's composer (›) read from
// the pane: a draft holds the continuation and stays as typed; cleared,
// the turn is continued once.
func TestRealCodexDraftHoldsTheContinuation(t *testing.T) {
	c := startCodex(t, "500")
	c.send("hello")
	c.waitTurnEnd(1, "internal_server_error")
	heldForDraft(t, c.d, c.p, "codex", c.session(), func() int { return len(c.srv.Main()) })
	waitFor(t, "the continuation's turn to complete", 60*time.Second, func() (bool, string) {
		turns := c.turns()
		return len(turns) == 2 && turns[1].ended && turns[1].user == continuation, fmt.Sprintf("%+v", turns)
	})
}

// TestRealKimiDraftHoldsTheContinuation: the same with Kimi Code's framed
// prompt.
func TestRealKimiDraftHoldsTheContinuation(t *testing.T) {
	k := startKimi(t, "500", "500")
	k.p.typeLine("hello", "> hello")
	k.waitTurns("the failed turn", func(ts []kimiWireTurn) bool { return len(ts) >= 1 && ts[0].Reason == "failed" })
	heldForDraft(t, k.d, k.p, "kimi_code", k.session(), func() int { return len(k.srv.Main()) })
	k.waitTurns("the continuation turn completed", func(ts []kimiWireTurn) bool {
		return len(ts) == 2 && ts[1].Text == continuation && ts[1].Reason == "completed"
	})
}

// heldForDraft types a draft into the agent's prompt after its turn died,
// checks that the continuation waits for it without touching it and that
// the fake heard nothing more, then clears it (Ctrl-U).
func heldForDraft(t *testing.T, d *daemon, p *pane, agent, session string, requests func() int) {
	t.Helper()
	prompt := func() classify.Composer { return p.promptOf(agent) }
	before := requests()
	if _, err := p.run("send-keys", "-t", "cc", "-l", "--", draft); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the draft in the prompt", 15*time.Second, func() (bool, string) {
		return strings.Join(strings.Fields(prompt().Draft), " ") == draft, p.screen()
	})
	waitFor(t, "the continuation held for the draft", 40*time.Second, func() (bool, string) {
		st, _ := sessionIn(d.cli("status", "--json"), agent, session)
		return st.State == "waiting_you", st.State + "\n" + d.cli("explain", session)
	})
	if out := d.cli("explain", session); !strings.Contains(out, "waiting: you have unsent text in the prompt") {
		t.Errorf("nudge explain does not say why it waits:\n%s", out)
	}
	time.Sleep(3 * time.Second)
	if got := strings.Join(strings.Fields(prompt().Draft), " "); got != draft || requests() != before {
		t.Fatalf("with a draft: the prompt holds %q and the provider heard %d more requests, want the draft and none", got, requests()-before)
	}
	for range 3 {
		p.press("C-u")
	}
	waitFor(t, "the draft cleared", 15*time.Second, func() (bool, string) { return prompt().Empty(), p.screen() })
}

// TestRealCodexLegacyDraftHoldsTheContinuation: the same with Codex 0.98,
// whose empty composer shows one of its example prompts.
func TestRealCodexLegacyDraftHoldsTheContinuation(t *testing.T) {
	c := startCodexCLI(t, codexLegacyCLI, codexLegacyReady, "500")
	c.p.typeLine("hello", "hello")
	waitFor(t, "the failed request", 30*time.Second, func() (bool, string) { return len(c.srv.Main()) == 1, "" })
	heldForDraft(t, c.d, c.p, "codex", c.session(), func() int { return len(c.srv.Main()) })
	waitFor(t, "the continuation's turn to complete", codexLegacyWait, func() (bool, string) {
		main := c.srv.Main()
		return len(main) == 2 && main[1].LastUserText == continuation && c.legacyAnswered(), fmt.Sprintf("%+v", main)
	})
}

// TestRealGeminiDraftHoldsTheContinuation: the same with Gemini CLI's
// prompt (docs/agents/gemini.md §7).
func TestRealGeminiDraftHoldsTheContinuation(t *testing.T) {
	mode := "stream-503"
	g := startGemini(t, mode, mode, mode)
	g.p.typeLine("hello", "> hello")
	g.waitTurns("the failed turn", func(ts []geminiTurn) bool { return len(ts) >= 1 && ts[0].End == "error" })
	heldForDraft(t, g.d, g.p, "gemini", g.session(), func() int { return len(g.srv.Main()) })
	g.waitTurns("the continuation answered", func(ts []geminiTurn) bool {
		return len(ts) == 2 && ts[1].Text == continuation && ts[1].End == "gemini"
	})
}
