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
	if _, err := tty.Write([]byte("x\x7f")); err != nil { // a key, then Backspace: the prompt is empty again
		t.Fatal(err)
	}
	inj := New(NewTmux())
	target := Target{PID: p.pid, TmuxPane: p.id, ReadComposer: lineComposer}
	waitFor(t, "the key to reach the pane", func() bool {
		_, err := inj.Deliver(context.Background(), target, "go on")
		if err != nil && !errors.Is(err, ErrPresent) && !errors.Is(err, ErrDraft) {
			t.Fatalf("Deliver right after a key = %v, want held for presence", err)
		}
		return errors.Is(err, ErrPresent)
	})
	received(t, p, "")
}

type devNull struct{}

func (devNull) Write(b []byte) (int, error) { return len(b), nil }
