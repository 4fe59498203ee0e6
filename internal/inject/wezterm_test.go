//go:build linux

package inject

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// weztermStandIn answers `wezterm cli list` with the panes in $D/list.json
// and `get-text` with $D/screen, to which pasted text draws itself.
func weztermStandIn(t *testing.T) *recorder {
	return standIn(t, "wezterm", `case "$ARGS" in
"cli list --format json") cat "$D/list.json" ;;
"cli get-text"*) cat "$D/screen" ;;
"cli send-text --pane-id "*" --no-paste") ;;
"cli send-text --pane-id "*) cat "$c/stdin" >> "$D/screen" ;;
esac`, "WEZTERM_UNIX_SOCKET")
}

func TestWezTermDelivers(t *testing.T) {
	rec := weztermStandIn(t)
	const sock = "/run/user/1000/wezterm/gui-sock-1"
	pid, tty := onTerminal(t, "WEZTERM_PANE=3", "WEZTERM_UNIX_SOCKET="+sock)
	rec.reply("list.json", fmt.Sprintf(`[{"window_id":0,"tab_id":0,"pane_id":1,"tty_name":"/dev/pts/999"},{"window_id":0,"tab_id":1,"pane_id":3,"tty_name":%q,"title":"claude"}]`, tty))
	ctx := context.Background()

	for _, text := range hostile {
		rec.reply("screen", "> ")
		before := len(rec.calls())
		d, err := New(NewWezTerm()).Deliver(ctx, Target{PID: pid}, text)
		if err != nil {
			t.Fatalf("Deliver(%q): %v", text, err)
		}
		if d != (Delivery{Backend: "wezterm", Where: sock + " 3"}) {
			t.Errorf("Delivery = %+v", d)
		}
		calls := rec.calls()[before:]
		if len(calls) != 6 {
			t.Fatalf("%d calls, want list, list, screen, paste, screen showing it, Enter: %+v", len(calls), calls)
		}
		argvIs(t, "locate", calls[0].argv, "cli", "list", "--format", "json")
		argvIs(t, "verify", calls[1].argv, "cli", "list", "--format", "json")
		argvIs(t, "screen before", calls[2].argv, "cli", "get-text", "--pane-id", "3")
		argvIs(t, "paste", calls[3].argv, "cli", "send-text", "--pane-id", "3")
		argvIs(t, "screen after", calls[4].argv, "cli", "get-text", "--pane-id", "3")
		argvIs(t, "enter", calls[5].argv, "cli", "send-text", "--pane-id", "3", "--no-paste")
		if calls[3].stdin != text || calls[5].stdin != "\r" {
			t.Errorf("stdin: paste %q, enter %q; want %q and \\r", calls[3].stdin, calls[5].stdin, text)
		}
		for _, c := range calls {
			if c.env["WEZTERM_UNIX_SOCKET"] != sock {
				t.Errorf("%q ran against socket %q, want the agent's %q", c.argv, c.env["WEZTERM_UNIX_SOCKET"], sock)
			}
		}
	}

	// The screen is read before typing when the agent needs it.
	rec.reply("screen", "Would you like to run it?")
	before := len(rec.calls())
	_, err := New(NewWezTerm()).Deliver(ctx, Target{PID: pid, ScreenReady: boxOnScreen}, "continue")
	if !errors.Is(err, ErrNotIdle) {
		t.Fatalf("Deliver(box on screen) = %v, want ErrNotIdle", err)
	}
	for _, c := range rec.calls()[before:] {
		if c.argv[1] == "send-text" {
			t.Errorf("typed although a box was on screen: %q", c.argv)
		}
	}
	argvIs(t, "screen", rec.calls()[before+1].argv, "cli", "get-text", "--pane-id", "3")
}

func TestWezTermRefuses(t *testing.T) {
	rec := weztermStandIn(t)
	ctx := context.Background()
	pid, tty := onTerminal(t, "WEZTERM_PANE=4")
	rec.reply("list.json", fmt.Sprintf(`[{"pane_id":3,"tty_name":%q}]`, tty))
	if _, err := NewWezTerm().Locate(ctx, Target{PID: pid}); !errors.Is(err, ErrOtherProcess) {
		t.Errorf("Locate(pane 3 on the agent's terminal, agent started in pane 4) = %v, want ErrOtherProcess", err)
	}

	outside, _ := onTerminal(t)
	if _, err := NewWezTerm().Locate(ctx, Target{PID: outside}); !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), "WEZTERM_PANE") {
		t.Errorf("Locate(agent outside WezTerm) = %v, want ErrNotInTerminal", err)
	}

	rec.reply("list.json", fmt.Sprintf(`[{"pane_id":4,"tty_name":%q}]`, tty))
	w, err := NewWezTerm().Locate(ctx, Target{PID: pid})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	rec.reply("list.json", `[]`)
	before := len(rec.calls())
	if err := NewWezTerm().Send(ctx, w, "continue"); !errors.Is(err, ErrGone) {
		t.Errorf("Send(pane closed) = %v, want ErrGone", err)
	}
	if n := len(rec.calls()) - before; n != 1 {
		t.Errorf("%d calls after the pane closed, want only the re-check", n)
	}
}
