package inject

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// place is a backend standing in for a terminal nudge does not run in tests:
// it locates or refuses as told and records what it was asked to type.
type place struct {
	name   string
	refuse error
	typed  []string
}

func (p *place) Name() string { return p.name }

func (p *place) Locate(_ context.Context, t Target) (Where, error) {
	if p.refuse != nil {
		return Where{}, p.refuse
	}
	return Where{Server: p.name, Pane: "1", PID: t.PID}, nil
}

func (p *place) Send(_ context.Context, _ Where, text string) error {
	p.typed = append(p.typed, text)
	return nil
}

func TestDeliverUsesFirstBackendThatLocates(t *testing.T) {
	absent := &place{name: "wezterm", refuse: refuse(ErrNotInTerminal, "pid 7 is not in wezterm")}
	first := &place{name: "kitty"}
	second := &place{name: "wrap"}
	inj := New(absent, first, second)

	d, err := inj.Deliver(context.Background(), Target{PID: 7}, "continue")
	if err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	if d != (Delivery{Backend: "kitty", Where: "kitty 1"}) {
		t.Errorf("Delivery = %+v", d)
	}
	if len(absent.typed) != 0 || len(second.typed) != 0 || len(first.typed) != 1 || first.typed[0] != "continue" {
		t.Errorf("typed: wezterm %q, kitty %q, wrap %q", absent.typed, first.typed, second.typed)
	}

	got := inj.Explain(context.Background(), Target{PID: 7})
	want := []Finding{
		{Backend: "wezterm", Err: absent.refuse},
		{Backend: "kitty", Where: "kitty 1", Use: true},
		{Backend: "wrap", Where: "wrap 1"},
	}
	if len(got) != len(want) {
		t.Fatalf("Explain = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Explain[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestDeliverWithoutTerminalGivesEveryReason(t *testing.T) {
	a := &place{name: "tmux", refuse: refuse(ErrNotInTerminal, "pid 7 is not in tmux")}
	b := &place{name: "kitty", refuse: errors.New("kitty remote control is off")}
	_, err := New(a, b).Deliver(context.Background(), Target{PID: 7, Idle: func(context.Context) error {
		t.Error("Idle checked although nothing was located")
		return nil
	}}, "continue")
	want := "no terminal found for pid 7 (tmux: pid 7 is not in tmux; kitty: kitty remote control is off)"
	if !errors.Is(err, ErrNoTerminal) || !errors.Is(err, ErrNotInTerminal) || err.Error() != want {
		t.Errorf("Deliver = %v, want %q", err, want)
	}

	_, err = New().Deliver(context.Background(), Target{PID: 7}, "continue")
	if !errors.Is(err, ErrNoTerminal) || !strings.Contains(err.Error(), "no backend") {
		t.Errorf("Deliver(no backends) = %v", err)
	}
}
func TestPaneID(t *testing.T) {
	for in, want := range map[string]string{"%3": "%3", "cc3:@3.%3": "%3", "a.b:@12.%40": "%40", "": "", "cc3:@3": "", "%": "", "%x": "", "%-1": ""} {
		got, err := paneID(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("paneID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestTmuxSocket(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/tmux-1000/default,1234,0": "/tmp/tmux-1000/default",
		"/tmp/a,b/sock,99,3":            "/tmp/a,b/sock",
		"":                              "",
		"/tmp/sock":                     "",
		",1,0":                          "",
	} {
		got, err := tmuxSocket(1, in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("tmuxSocket(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err != nil && !errors.Is(err, ErrNotInTerminal) {
			t.Errorf("tmuxSocket(%q) error %v is not %v", in, err, ErrNotInTerminal)
		}
	}
}

func TestDeliverRefusesWithoutScreenWhenTheAgentNeedsOne(t *testing.T) {
	blind := &place{name: "blind"}
	ready := func(string) error { t.Error("ScreenReady called without a screen"); return nil }
	_, err := New(blind).Deliver(context.Background(), Target{PID: 7, ScreenReady: ready}, "continue")
	if !errors.Is(err, ErrNoScreen) || len(blind.typed) != 0 {
		t.Fatalf("Deliver = %v, typed %q; want ErrNoScreen and nothing typed", err, blind.typed)
	}
	f := New(blind).Explain(context.Background(), Target{PID: 7, ScreenReady: ready})
	if len(f) != 1 || !f[0].Use || !errors.Is(f[0].Err, ErrNoScreen) {
		t.Errorf("Explain = %+v, want the place with ErrNoScreen", f)
	}
	// Without a live process (a headless continuation) there is no screen
	// that could show a box.
	if _, err := New(blind).Deliver(context.Background(), Target{ScreenReady: ready}, "continue"); err != nil || len(blind.typed) != 1 {
		t.Errorf("Deliver(no process) = %v, typed %q", err, blind.typed)
	}
}
