package inject

import (
	"context"
	"errors"
	"testing"
)

// TestTypingComesBeforeTheFirstKey: the place is handed to Typing after the
// checks and before anything is typed; a Typing error types nothing.
func TestTypingComesBeforeTheFirstKey(t *testing.T) {
	p := &place{name: "kitty"}
	var typing []string
	target := Target{PID: 7, Typing: func(_ context.Context, backend string, w Where) error {
		typing = append(typing, backend+" "+w.String())
		if len(p.typed) != 0 {
			t.Error("Typing called after the text was typed")
		}
		return nil
	}}
	if _, err := New(p).Deliver(context.Background(), target, "continue"); err != nil {
		t.Fatal(err)
	}
	if len(typing) != 1 || typing[0] != "kitty kitty 1" || len(p.typed) != 1 {
		t.Fatalf("typing %q, typed %q", typing, p.typed)
	}

	refused := errors.New("disk full")
	target.Typing = func(context.Context, string, Where) error { return refused }
	target.Idle = func(context.Context) error { return nil }
	if _, err := New(p).Deliver(context.Background(), target, "again"); !errors.Is(err, refused) {
		t.Fatalf("Deliver = %v, want the Typing error", err)
	}
	if len(p.typed) != 1 {
		t.Fatalf("typed %q after Typing refused", p.typed)
	}
}

// TestScreenOfAPlace: a backend that shows screens is asked for the place;
// one that cannot, or an unknown one, says so.
func TestScreenOfAPlace(t *testing.T) {
	inj := New(&place{name: "kitty"}, &screenPlace{place: place{name: "tmux"}, screen: "> go on"})
	if got, err := inj.Screen(context.Background(), "tmux", Where{Pane: "%1"}); err != nil || got != "> go on" {
		t.Errorf("Screen(tmux) = %q, %v", got, err)
	}
	for _, name := range []string{"kitty", "wezterm"} {
		if _, err := inj.Screen(context.Background(), name, Where{}); !errors.Is(err, ErrNoScreen) {
			t.Errorf("Screen(%s) = %v, want ErrNoScreen", name, err)
		}
	}
}

type screenPlace struct {
	place
	screen string
}

func (s *screenPlace) Screen(context.Context, Where) (string, error) { return s.screen, nil }
