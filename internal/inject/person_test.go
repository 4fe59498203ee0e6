//go:build linux

package inject

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"nudge/internal/classify"
)

// lineComposer reads a `cat` pane as an agent's prompt: the line the
// terminal echoes and has not sent is the draft (the last line on screen).
func lineComposer(screen string, _ classify.Caret) classify.Composer {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	return classify.Composer{Seen: true, Draft: strings.TrimRight(lines[len(lines)-1], " ")}
}

// TestDraftHoldsTheContinuation: text the person typed and did not send
// holds the delivery before any key (ErrHeld, ErrDraft), and is left as
// it was; once they cleared it, the continuation goes in.
func TestDraftHoldsTheContinuation(t *testing.T) {
	s := newServer(t)
	p := s.cat("agent")
	inj := New(NewTmux())
	ctx := context.Background()
	target := Target{PID: p.pid, TmuxPane: p.id, ReadComposer: lineComposer}

	s.tmux("send-keys", "-t", p.id, "-l", "my half-written prompt")
	waitFor(t, "the draft on screen", func() bool { return strings.Contains(s.tmux("capture-pane", "-p", "-t", p.id), "half-written") })
	_, err := inj.Deliver(ctx, target, "go on")
	if !errors.Is(err, ErrHeld) || !errors.Is(err, ErrDraft) {
		t.Fatalf("Deliver over a draft = %v, want held for the draft", err)
	}
	if screen := s.tmux("capture-pane", "-p", "-t", p.id); strings.Contains(screen, "go on") || !strings.Contains(screen, "my half-written prompt") {
		t.Fatalf("the draft was touched:\n%s", screen)
	}
	s.tmux("send-keys", "-t", p.id, "C-u")
	waitFor(t, "the draft cleared", func() bool { return !strings.Contains(s.tmux("capture-pane", "-p", "-t", p.id), "half-written") })
	if _, err := inj.Deliver(ctx, target, "go on"); err != nil {
		t.Fatalf("Deliver into the cleared prompt: %v", err)
	}
	received(t, p, "go on\n")
}

// TestKeyBetweenPasteAndEnter: a key the person presses after nudge pasted
// and before Enter means no Enter: the prompt holds both, and nothing is
// sent.
func TestKeyBetweenPasteAndEnter(t *testing.T) {
	s := newServer(t)
	p := s.cat("agent")
	inj := New(NewTmux())
	target := Target{PID: p.pid, TmuxPane: p.id, ReadComposer: lineComposer}
	testHookBeforeEnter = func() {
		s.tmux("send-keys", "-t", p.id, "-l", " and mine")
		waitFor(t, "the person's key on screen", func() bool { return strings.Contains(s.tmux("capture-pane", "-p", "-t", p.id), "and mine") })
	}
	t.Cleanup(func() { testHookBeforeEnter = nil })
	_, err := inj.Deliver(context.Background(), target, "go on")
	if !errors.Is(err, ErrNotAlone) || errors.Is(err, ErrHeld) {
		t.Fatalf("Deliver with a key in the gap = %v, want ErrNotAlone (typed, no Enter)", err)
	}
	time.Sleep(300 * time.Millisecond)
	received(t, p, "")
	if screen := s.tmux("capture-pane", "-p", "-t", p.id); !strings.Contains(screen, "go on and mine") {
		t.Errorf("the prompt does not hold both texts:\n%s", screen)
	}
}

// TestRecentKeyHoldsTheContinuation: a key pressed in a client that shows
// the pane, moments ago, holds the delivery (tmux's client activity).
func TestRecentKeyHoldsTheContinuation(t *testing.T) {
	s := newServer(t)
	p := s.cat("agent")
	attach := exec.Command("tmux", "-S", s.socket, "attach-session", "-t", p.id)
	attach.Env = append(s.env, "TERM=xterm")
	tty, err := pty.StartWithSize(attach, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = attach.Process.Kill(); _ = attach.Wait(); _ = tty.Close() })
	go func() { _, _ = tty.WriteTo(devNull{}) }()
	waitFor(t, "the client attached", func() bool { return strings.TrimSpace(s.tmux("list-clients", "-F", "#{client_tty}")) != "" })
	// A key, then Backspace: the prompt is empty again, the person there.
	screen := func() string { return strings.TrimSpace(s.tmux("capture-pane", "-p", "-t", p.id)) }
	if _, err := tty.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the key in the pane", func() bool { return screen() == "x" })
	if _, err := tty.Write([]byte("\x7f")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the key undone", func() bool { return screen() == "" })
	inj := New(NewTmux())
	target := Target{PID: p.pid, TmuxPane: p.id, ReadComposer: lineComposer}
	if _, err := inj.Deliver(context.Background(), target, "go on"); !errors.Is(err, ErrPresent) || !errors.Is(err, ErrHeld) {
		t.Fatalf("Deliver right after a key = %v, want held for presence", err)
	}
	received(t, p, "")
}

type devNull struct{}

func (devNull) Write(b []byte) (int, error) { return len(b), nil }

// BenchmarkLastLookToEnter measures the window that remains between
// nudge's last look at a tmux prompt (capture-pane, the caret) and its
// Enter (send-keys): a key the person presses in it goes in after nudge's
// text, into the same message (docs/behaviour.md §3).
func BenchmarkLastLookToEnter(b *testing.B) {
	s := newServer(b)
	p := s.cat("agent")
	tm := NewTmux()
	ctx := context.Background()
	w, err := tm.Locate(ctx, Target{PID: p.pid, TmuxPane: p.id})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := look(ctx, tm, w); err != nil {
			b.Fatal(err)
		}
		if _, err := tm.run(ctx, w.Server, nil, "send-keys", "-t", w.Pane, "Enter"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSees: doctor says what each backend shows of the person, from what
// the backend can do.
func TestSees(t *testing.T) {
	got := New(NewTmux(), NewScreen(), NewWrap(t.TempDir())).Sees()
	want := []string{
		"tmux: the agent's prompt on screen, your keys and modes",
		"screen: the agent's prompt on screen",
		"wrap: your keys and modes",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Sees() = %q, want %q", got, want)
	}
}

// TestLeftoverIsNotSentBlindly: nudge's own continuation left in the
// prompt (a stop between paste and Enter) is recognised as nudge's, held,
// and never submitted.
func TestLeftoverIsNotSentBlindly(t *testing.T) {
	s := newServer(t)
	p := s.cat("agent")
	target := Target{PID: p.pid, TmuxPane: p.id, ReadComposer: lineComposer}
	s.tmux("send-keys", "-t", p.id, "-l", "go on")
	waitFor(t, "the leftover on screen", func() bool { return strings.Contains(s.tmux("capture-pane", "-p", "-t", p.id), "go on") })
	_, err := New(NewTmux()).Deliver(context.Background(), target, "go on")
	if !errors.Is(err, ErrLeftover) || !errors.Is(err, ErrHeld) {
		t.Fatalf("Deliver over nudge's own leftover = %v, want held as a leftover", err)
	}
	time.Sleep(200 * time.Millisecond)
	received(t, p, "")
}
