//go:build linux

package inject

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// boxOnScreen stands in for an agent's ScreenReady: a box shown refuses.
func boxOnScreen(screen string) error {
	if strings.Contains(screen, "Would you like to") {
		return errors.New("an approval box is on screen")
	}
	return nil
}

func TestTmuxScreenCheckedBeforeTyping(t *testing.T) {
	s := newServer(t)
	boxed := s.start("boxed", "stty echo; printf 'Would you like to run it?\\n'; cat > $OUT")
	idle := s.start("idle", "stty echo; printf '> Ask anything\\n'; cat > $OUT")
	for _, p := range []testPane{boxed, idle} {
		waitFor(t, "the screen of "+p.id, func() bool {
			return strings.Contains(s.tmux("capture-pane", "-p", "-t", p.id), "Ask anything") || strings.Contains(s.tmux("capture-pane", "-p", "-t", p.id), "Would")
		})
	}
	inj := New(NewTmux())
	ctx := context.Background()

	_, err := inj.Deliver(ctx, Target{PID: boxed.pid, ScreenReady: boxOnScreen}, "refused")
	if !errors.Is(err, ErrNotIdle) || !strings.Contains(err.Error(), "approval box") {
		t.Fatalf("Deliver(box on screen) = %v, want ErrNotIdle", err)
	}
	if _, err := inj.Deliver(ctx, Target{PID: idle.pid, ScreenReady: boxOnScreen}, "typed"); err != nil {
		t.Fatalf("Deliver(idle screen): %v", err)
	}
	received(t, idle, "typed\n")
	if got, _ := os.ReadFile(boxed.out); len(got) != 0 {
		t.Errorf("the boxed pane received %q", got)
	}
}
