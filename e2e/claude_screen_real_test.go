//go:build linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/fakeanthropic"
	"nudge/internal/testenv"
)

// TestRealClaudeInScreenRecoversAfter500 is TestRealClaudeRecoversAfter500
// with Claude Code in a GNU screen window: nudge finds the window from the
// CLI's STY and WINDOW and types its continuation there.
func TestRealClaudeInScreenRecoversAfter500(t *testing.T) {
	claude := claudeCLI.need(t)
	screen := testenv.Need(t, "screen")
	w := newClaudeWorld(t)
	srv, baseURL := serveFake(w, fakeanthropic.New, []string{"500", "ok"})
	d := w.startDaemon()

	w.showOnFailure("transcript", func() any { return summarize(readRecords(w.transcript())) })
	s := w.startScreen(screen, w.claudeEnv(baseURL), claude, "--session-id", sessionID)
	waitFor(t, "the CLI's registry entry", 30*time.Second, func() (bool, string) {
		reg := claudeRegistry(w)
		return reg != nil, fmt.Sprint(reg)
	})
	// screen's hardcopy shows "❯" as "o" (one byte per character).
	s.waitScreen("prompt", func(screen string) bool { return strings.Contains(screen, "\no ") })
	w.step("prompt on screen")

	s.typeLine("hello", "o hello")
	w.step("typed hello")
	expectRecovery(t, w, d, srv, "screen")
}

// screenSession is the GNU screen session "cc" a CLI runs in, with its
// sockets in the world.
type screenSession struct {
	w   *world
	bin string
	env []string
}

// startScreen runs argv with env in a detached screen session in the
// project folder; its window is shown when the test fails and it ends with
// the test.
func (w *world) startScreen(bin string, env []string, argv ...string) *screenSession {
	w.t.Helper()
	dir := w.path("screen")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		w.t.Fatal(err)
	}
	s := &screenSession{w: w, bin: bin, env: append(env, "SCREENDIR="+dir)}
	cmd := exec.Command(bin, append([]string{"-U", "-dmS", "cc"}, argv...)...) // -U: the window speaks UTF-8
	cmd.Env, cmd.Dir = s.env, w.project
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("start %s in screen: %v\n%s", filepath.Base(argv[0]), err, out)
	}
	w.t.Cleanup(func() {
		if w.t.Failed() {
			w.t.Logf("screen window at the end:\n%s", s.screen())
		}
		s.run("-X", "quit")
	})
	return s
}

func (s *screenSession) run(args ...string) (string, error) {
	cmd := exec.Command(s.bin, append([]string{"-S", "cc", "-p", "0"}, args...)...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("screen %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// screen returns the window's visible text (hardcopy, then a query that
// screen answers only after it wrote the copy).
func (s *screenSession) screen() string {
	file := s.w.path("screen/hardcopy")
	os.Remove(file)
	if _, err := s.run("-X", "hardcopy", file); err != nil {
		return err.Error()
	}
	if _, err := s.run("-Q", "number"); err != nil {
		return err.Error()
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	return strings.ReplaceAll(string(b), "\xa0", " ")
}

func (s *screenSession) waitScreen(what string, ok func(string) bool) {
	waitFor(s.w.t, what+" on screen", 30*time.Second, func() (bool, string) {
		text := s.screen()
		return ok(text), text
	})
}

// typeLine types text (no screen escapes in it), waits for its echo, and
// submits with Enter.
func (s *screenSession) typeLine(text, echo string) {
	s.w.t.Helper()
	if _, err := s.run("-X", "stuff", text); err != nil {
		s.w.t.Fatal(err)
	}
	s.waitScreen(fmt.Sprintf("%q typed", text), func(screen string) bool { return strings.Contains(screen, echo) })
	if _, err := s.run("-X", "stuff", "^M"); err != nil {
		s.w.t.Fatal(err)
	}
}

// TestRealClaudeInScreenHoldsForTheDraft: in GNU screen too, a draft holds
// the continuation (the prompt read from the hardcopy, one byte per
// cell) and stays as typed; cleared, the turn is continued once.
func TestRealClaudeInScreenHoldsForTheDraft(t *testing.T) {
	claude := claudeCLI.need(t)
	screen := testenv.Need(t, "screen")
	w := newClaudeWorld(t)
	srv, baseURL := serveFake(w, fakeanthropic.New, []string{"500", "ok"})
	d := w.startDaemon(personChecks)
	w.showOnFailure("transcript", func() any { return summarize(readRecords(w.transcript())) })
	s := w.startScreen(screen, w.claudeEnv(baseURL), claude, "--session-id", sessionID)
	waitFor(t, "the CLI's registry entry", 30*time.Second, func() (bool, string) {
		reg := claudeRegistry(w)
		return reg != nil, fmt.Sprint(reg)
	})
	s.waitScreen("prompt", func(screen string) bool { return strings.Contains(screen, "\no ") })
	s.typeLine("hello", "o hello")
	w.waitAPIErrors(1)
	if _, err := s.run("-X", "stuff", draft); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the continuation held for the draft", 30*time.Second, func() (bool, string) {
		st, _ := sessionIn(d.cli("status", "--json"), "claude", sessionID)
		return st.State == "waiting_you", st.State
	})
	time.Sleep(4 * time.Second)
	if text := s.screen(); !strings.Contains(text, "o "+draft) {
		t.Fatalf("the draft is not as typed:\n%s", text)
	}
	if n := count(readRecords(w.transcript()), isUserText(continuation)); n != 0 || len(srv.Main()) != 1 {
		t.Fatalf("with a draft in the prompt: %d continuations, %d main-loop requests, want none and 1", n, len(srv.Main()))
	}
	if _, err := s.run("-X", "stuff", "^U"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the continuation and a completed turn", 60*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		missing := recoveredTurn(recs)
		return missing == "", "missing: " + missing + "\n" + summarize(recs)
	})
	if n := count(readRecords(w.transcript()), isUserText(continuation)); n != 1 {
		t.Errorf("continuation recorded %d times, want once", n)
	}
}
