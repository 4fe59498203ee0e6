package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"nudge/internal/advice"
	"nudge/internal/config"
	"nudge/internal/inject"
	"nudge/internal/retry"
)

// A continuation for a Claude Code session whose process cannot be found
// fails in every backend; the person reads one plain sentence about Claude
// Code that says how to run it, not each backend's refusal.
func TestUndeliveredFromEveryBackendIsOnePlainSentence(t *testing.T) {
	cfg := config.Config{DataDir: t.TempDir()}
	cfg.Inject.Order = []string{inject.Auto}
	inj, err := NewInjector(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	target := sessionTarget(retry.Key{Agent: "claude", Session: "0b5e7c1d-1111-4111-8111-222222222222"}, t.TempDir(), "", nil, nil, nil)
	findProcess(context.Background(), &target)
	del, derr := inj.Deliver(context.Background(), target, "go on")
	if derr == nil || !errors.Is(derr, inject.ErrNoTerminal) {
		t.Fatalf("Deliver = %v, want no terminal", derr)
	}
	why := undelivered(derr, del, target.PID)
	if got := advice.WhyOf(why); got.Cause != advice.Unreachable {
		t.Errorf("cause %v of %v", got.Cause, derr)
	}
	if !errors.Is(why, inject.ErrNoTerminal) {
		t.Errorf("the reason lost the error it came from: %v", why)
	}
	text := advice.Undelivered("claude", advice.WhyOf(why))
	for _, bad := range []string{"OpenCode", "opencode", "no agent process known", "(", "wrap:"} {
		if strings.Contains(text, bad) {
			t.Errorf("%q says %q", text, bad)
		}
	}
	if !strings.Contains(text, "`nudge wrap -- claude`") || !strings.Contains(text, "tmux") {
		t.Errorf("%q does not say how to run Claude Code so that nudge can type into it", text)
	}
	if undelivered(nil, del, 0) != nil {
		t.Error("a delivery that worked has a reason")
	}
}

// TestEveryRefusalIsTold: each reason inject refuses a delivery for is
// told in its own words, never as "typing failed".
func TestEveryRefusalIsTold(t *testing.T) {
	for _, r := range inject.Refusals {
		why := advice.WhyOf(undelivered(fmt.Errorf("pane %%3: %w", r), inject.Delivery{Backend: "tmux", Where: "%3"}, 7))
		if why.Cause == advice.TypingFailed {
			t.Errorf("refusal %q is told as a terminal that refused the keys", r)
		}
	}
	if why := advice.WhyOf(undelivered(errors.New("tmux: exit status 1"), inject.Delivery{}, 7)); why.Cause != advice.TypingFailed {
		t.Errorf("a failed tmux command is told as %v", why.Cause)
	}
}
