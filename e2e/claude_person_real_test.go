//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"nudge/e2e/fakeanthropic"
	"nudge/internal/classify"
	"nudge/internal/testenv"
)

// The person at the keyboard always wins (docs/behaviour.md §3): the real
// Claude Code in tmux, a dead turn, and a person who is using the prompt
// when the continuation comes due. Held checks come every 2 s here
// (retry.box_first_check).
const personChecks = "NUDGE_RETRY_BOX_FIRST_CHECK=2s"

// draft is what the person leaves typed and unsent.
const draft = "please also look at the flaky test in internal/retry before you go on"

// TestRealClaudeDraftHoldsTheContinuation: a draft typed after the dead
// turn holds the continuation, says so, and stays byte for byte; cleared,
// the turn is continued once. A draft the person then sends themselves
// ends the next episode with nothing typed by nudge.
func TestRealClaudeDraftHoldsTheContinuation(t *testing.T) {
	claude := claudeCLI.need(t)
	tmux := testenv.Need(t, "tmux")
	w := newClaudeWorld(t)
	srv, baseURL := serveFake(w, fakeanthropic.New, []string{"500", "ok", "500", "ok"})
	d := w.startDaemon(personChecks)
	p := w.claudeAtPrompt(tmux, claude, baseURL)

	p.typeLine("hello", "❯ hello")
	w.waitAPIErrors(1)
	p.typeDraft(draft)
	w.step("draft typed")
	p.waitHeld(d, "waiting: you have unsent text in the prompt")
	time.Sleep(5 * time.Second) // two more held checks
	p.expectDraft(draft)
	if n := count(readRecords(w.transcript()), isUserText(continuation)); n != 0 || len(srv.Main()) != 1 {
		t.Fatalf("with a draft in the prompt: %d continuations, %d main-loop requests, want none and 1", n, len(srv.Main()))
	}

	p.press("C-u")
	p.expectDraft("")
	w.step("draft cleared")
	waitFor(t, "the continuation and a completed turn", 60*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		missing := recoveredTurn(recs)
		return missing == "", "missing: " + missing + "\n" + summarize(recs)
	})
	if n := count(readRecords(w.transcript()), isUserText(continuation)); n != 1 {
		t.Errorf("continuation recorded %d times, want once", n)
	}

	// The next dead turn: the person types and sends their own prompt.
	p.typeLine("second", "❯ second")
	w.waitAPIErrors(2)
	p.typeDraft(draft)
	p.waitHeld(d, "waiting: you have unsent text in the prompt")
	p.press("Enter")
	waitFor(t, "the person's prompt recorded", 30*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		return count(recs, isUserText(draft)) == 1, summarize(recs)
	})
	time.Sleep(6 * time.Second)
	if n := count(readRecords(w.transcript()), isUserText(continuation)); n != 1 {
		t.Errorf("after the person sent their own prompt: %d continuations in all, want the first one only", n)
	}
	var tl struct {
		Attempts []struct{ Status, Reason string }
	}
	out := d.cli("explain", sessionID, "--json")
	if err := json.Unmarshal([]byte(out), &tl); err != nil {
		t.Fatalf("nudge explain --json: %v\n%s", err, out)
	}
	sent := 0
	for _, a := range tl.Attempts {
		if a.Status == "sent" {
			sent++
		}
	}
	if sent != 1 {
		t.Errorf("attempts sent: %d, want 1\n%s", sent, out)
	}
}

// TestRealClaudeKeyOrCopyModeHoldsTheContinuation: a key pressed in an
// attached client moments before the continuation is due holds it, and so
// does copy mode, which nudge never leaves for the person.
func TestRealClaudeKeyOrCopyModeHoldsTheContinuation(t *testing.T) {
	claude := claudeCLI.need(t)
	tmux := testenv.Need(t, "tmux")
	w := newClaudeWorld(t)
	_, baseURL := serveFake(w, fakeanthropic.New, []string{"500", "ok", "500", "ok"})
	d := w.startDaemon(personChecks)
	p := w.claudeAtPrompt(tmux, claude, baseURL)
	client := p.attach()

	p.typeLine("hello", "❯ hello")
	w.waitAPIErrors(1)
	// A key and its undo, through the person's own terminal, 1 s before due.
	time.Sleep(time.Second)
	if _, err := client.Write([]byte("x\x7f")); err != nil {
		t.Fatal(err)
	}
	p.waitHeld(d, "waiting: you are typing in the session's terminal")
	waitFor(t, "the continuation once the person stopped typing", 60*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		return count(recs, isUserText(continuation)) == 1, summarize(recs)
	})

	waitFor(t, "the turn done", 60*time.Second, func() (bool, string) {
		return p.registry()["status"] == "idle", p.screen()
	})
	p.typeLine("second", "❯ second")
	w.waitAPIErrors(2)
	if _, err := p.run("copy-mode", "-t", "cc"); err != nil {
		t.Fatal(err)
	}
	p.waitHeld(d, "waiting: the pane is in copy mode")
	time.Sleep(5 * time.Second)
	if mode, _ := p.run("display-message", "-p", "-t", "cc", "#{pane_in_mode}"); strings.TrimSpace(mode) != "1" {
		t.Fatalf("the pane left copy mode while nudge waited (pane_in_mode %q)", mode)
	}
	if n := count(readRecords(w.transcript()), isUserText(continuation)); n != 1 {
		t.Fatalf("in copy mode: %d continuations, want still 1", n)
	}
	if _, err := p.run("send-keys", "-t", "cc", "-X", "cancel"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the continuation after copy mode", 60*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		return count(recs, isUserText(continuation)) == 2, summarize(recs)
	})
}

// TestRealClaudeKeyBetweenPasteAndEnter: a key pressed after nudge pasted
// and before it pressed Enter (the daemon's test hook widens that gap to
// 3 s) means no Enter: nothing is submitted, both texts stay in the
// prompt, and the person is told at once.
func TestRealClaudeKeyBetweenPasteAndEnter(t *testing.T) {
	claude := claudeCLI.need(t)
	tmux := testenv.Need(t, "tmux")
	w := newClaudeWorld(t)
	srv, baseURL := serveFake(w, fakeanthropic.New, []string{"500", "ok"})
	d := w.startDaemon("NUDGE_TEST_ENTER_GAP=3s")
	p := w.claudeAtPrompt(tmux, claude, baseURL)

	p.typeLine("hello", "❯ hello")
	p.waitScreen("nudge's paste", func(s string) bool { return strings.Contains(p.composer().Draft, "nudge e2e:") })
	const mine = " and mine"
	if _, err := p.run("send-keys", "-t", "cc", "-l", mine); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the person told", 30*time.Second, func() (bool, string) {
		for _, e := range d.inbox() {
			if strings.Contains(e.What, "did not press Enter") {
				return true, ""
			}
		}
		return false, d.cli("inbox", "--json")
	})
	time.Sleep(2 * time.Second)
	if got := p.composer(); !strings.HasSuffix(got.Draft, mine) || !strings.Contains(strings.Join(strings.Fields(got.Draft), " "), continuation) {
		t.Errorf("the prompt holds %q, want nudge's text and the person's", got.Draft)
	}
	if n := count(readRecords(w.transcript()), isUserText(continuation)); n != 0 || len(srv.Main()) != 1 {
		t.Errorf("after a key in the gap: %d continuations submitted, %d main-loop requests, want none and 1", n, len(srv.Main()))
	}
}

// waitAPIErrors waits until the transcript holds n records of a 500.
func (w *world) waitAPIErrors(n int) {
	w.t.Helper()
	waitFor(w.t, fmt.Sprintf("%d records of a 500", n), 60*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		return count(recs, isAPIError(500)) == n, summarize(recs)
	})
}

// claudeAtPrompt starts Claude Code in tmux against the fake at baseURL
// and waits until it registered and shows its prompt.
func (w *world) claudeAtPrompt(tmux, claude, baseURL string) *pane {
	w.t.Helper()
	p := w.startClaude(tmux, claude, baseURL)
	p.waitRegistry()
	p.waitScreen("prompt", func(s string) bool { return strings.Contains(s, "\n❯") })
	return p
}

// typeDraft types text into the prompt without sending it, as a person.
func (p *pane) typeDraft(text string) {
	p.w.t.Helper()
	if _, err := p.run("send-keys", "-t", "cc", "-l", "--", text); err != nil {
		p.w.t.Fatal(err)
	}
	p.expectDraft(text)
}

// composer is the prompt as Claude Code shows it now.
func (p *pane) composer() classify.Composer { return p.promptOf("claude") }

// promptOf is agent's prompt as the pane shows it now, read as nudge reads
// it (with the caret).
func (p *pane) promptOf(agent string) classify.Composer {
	a, _ := classify.Lookup(agent)
	caret := classify.Caret{}
	if out, err := p.run("display-message", "-p", "-t", "cc", "#{cursor_x} #{cursor_y}"); err == nil {
		var x, y int
		if _, err := fmt.Sscan(out, &x, &y); err == nil {
			caret = classify.Caret{Col: x, Row: y, Known: true}
		}
	}
	screen, _ := p.run("capture-pane", "-p", "-t", "cc")
	return a.ReadComposer(screen, caret)
}

// expectDraft waits until the prompt holds exactly text.
func (p *pane) expectDraft(text string) {
	p.w.t.Helper()
	waitFor(p.w.t, "the prompt to hold "+text, 15*time.Second, func() (bool, string) {
		c := p.composer()
		return c.Seen && strings.Join(strings.Fields(c.Draft), " ") == text, p.screen()
	})
}

// waitHeld waits until nudge explain and status say the continuation
// waits, in words.
func (p *pane) waitHeld(d *daemon, words string) {
	p.w.t.Helper()
	waitFor(p.w.t, "the continuation held: "+words, 30*time.Second, func() (bool, string) {
		st, _ := sessionIn(d.cli("status", "--json"), "claude", sessionID)
		out := d.cli("explain", sessionID)
		return st.State == "waiting_you" || strings.Contains(words, "not idle") && st.State == "retrying", st.State + "\n" + out
	})
	if out := d.cli("explain", sessionID); !strings.Contains(out, words) {
		p.w.t.Errorf("nudge explain does not say %q:\n%s", words, out)
	}
}

// attach attaches a tmux client to the pane's session in a terminal of
// the test's, as a person's terminal would be; its keys count as the
// person's.
func (p *pane) attach() interface{ Write([]byte) (int, error) } {
	p.w.t.Helper()
	cmd := exec.Command(p.tmux[0], append(p.tmux[1:], "attach-session", "-t", "cc")...)
	cmd.Env = append(p.w.baseEnv(), "TERM=xterm-256color")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		p.w.t.Fatal(err)
	}
	p.w.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = tty.Close() })
	go func() {
		buf := make([]byte, 32<<10)
		for {
			if _, err := tty.Read(buf); err != nil {
				return
			}
		}
	}()
	waitFor(p.w.t, "the client attached", 10*time.Second, func() (bool, string) {
		out, _ := p.run("list-clients", "-F", "#{client_tty}")
		return strings.TrimSpace(out) != "", out
	})
	return tty
}

// TestRealClaudeInWrapHoldsForTheDraft: inside `nudge wrap`, which sees
// every key, a draft holds the continuation until the person sends or
// clears it (Ctrl-C); then the turn is continued through the wrapper.
func TestRealClaudeInWrapHoldsForTheDraft(t *testing.T) {
	claude := claudeCLI.need(t)
	tmux := testenv.Need(t, "tmux")
	w := newClaudeWorld(t)
	srv, baseURL := serveFake(w, fakeanthropic.New, []string{"500", "ok"})
	d := w.startDaemon(personChecks)
	w.showOnFailure("transcript", func() any { return summarize(readRecords(w.transcript())) })
	p := w.startPane(tmux, 200, 50, append(w.claudeEnv(baseURL), "TERM=xterm-256color", "NUDGE_DATA_DIR="+w.path("data")),
		w.nudge, "wrap", "--", claude, "--session-id", sessionID)
	p.waitRegistry()
	p.waitScreen("prompt", func(s string) bool { return strings.Contains(s, "\n❯") })

	p.typeLine("hello", "❯ hello")
	w.waitAPIErrors(1)
	p.typeDraft(draft)
	p.waitHeld(d, "waiting: you have unsent text in the prompt")
	time.Sleep(4 * time.Second)
	p.expectDraft(draft)
	if n := count(readRecords(w.transcript()), isUserText(continuation)); n != 0 || len(srv.Main()) != 1 {
		t.Fatalf("with a draft in the prompt: %d continuations, %d main-loop requests, want none and 1", n, len(srv.Main()))
	}
	p.press("C-c") // Claude Code clears the prompt
	p.expectDraft("")
	waitFor(t, "the continuation and a completed turn", 60*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		missing := recoveredTurn(recs)
		return missing == "", "missing: " + missing + "\n" + summarize(recs)
	})
	d.sentOnceThrough(t, sessionID, "wrap")
}
