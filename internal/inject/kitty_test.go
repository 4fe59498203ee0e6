//go:build linux

package inject

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// kittyStandIn answers `kitty @ ls` with $D/ls.json and get-text with
// $D/screen, to which the text sent draws itself.
func kittyStandIn(t *testing.T) *recorder {
	return standIn(t, "kitty", `case "$ARGS" in
"@ --to "*" ls") cat "$D/ls.json" ;;
"@ --to "*" get-text"*) cat "$D/screen" ;;
"@ --to "*" send-text "*" --stdin") cat "$c/stdin" >> "$D/screen" ;;
esac`)
}

func kittyWindows(windows ...string) string {
	return `[{"id":1,"tabs":[{"id":1,"windows":[` + strings.Join(windows, ",") + `]}]}]`
}

func TestKittyDelivers(t *testing.T) {
	rec := kittyStandIn(t)
	const sock = "unix:/tmp/kitty-nudge-test"
	pid, _ := onTerminal(t, "KITTY_LISTEN_ON="+sock, "KITTY_WINDOW_ID=7")
	rec.reply("ls.json", kittyWindows(
		`{"id":2,"pid":1,"foreground_processes":[{"pid":1}]}`,
		fmt.Sprintf(`{"id":7,"pid":%d,"foreground_processes":[{"pid":%d,"cmdline":["claude"]}]}`, pid, pid)))
	ctx := context.Background()

	for _, text := range hostile {
		rec.reply("screen", "> ")
		before := len(rec.calls())
		d, err := New(NewKitty()).Deliver(ctx, Target{PID: pid}, text)
		if err != nil {
			t.Fatalf("Deliver(%q): %v", text, err)
		}
		if d != (Delivery{Backend: "kitty", Where: sock + " 7"}) {
			t.Errorf("Delivery = %+v", d)
		}
		calls := rec.calls()[before:]
		if len(calls) != 6 {
			t.Fatalf("%d calls, want ls, ls, screen, text, screen showing it, Enter: %+v", len(calls), calls)
		}
		argvIs(t, "locate", calls[0].argv, "@", "--to", sock, "ls")
		argvIs(t, "verify", calls[1].argv, "@", "--to", sock, "ls")
		argvIs(t, "screen before", calls[2].argv, "@", "--to", sock, "get-text", "--match", "id:7")
		argvIs(t, "text", calls[3].argv, "@", "--to", sock, "send-text", "--match", "id:7", "--bracketed-paste", "auto", "--stdin")
		argvIs(t, "screen after", calls[4].argv, "@", "--to", sock, "get-text", "--match", "id:7")
		argvIs(t, "enter", calls[5].argv, "@", "--to", sock, "send-text", "--match", "id:7", `\r`)
		if calls[3].stdin != text || calls[5].stdin != "" {
			t.Errorf("stdin: text %q, enter %q; want %q and nothing", calls[3].stdin, calls[5].stdin, text)
		}
	}

	rec.reply("screen", "Would you like to run it?")
	before := len(rec.calls())
	if _, err := New(NewKitty()).Deliver(ctx, Target{PID: pid, ScreenReady: boxOnScreen}, "continue"); !errors.Is(err, ErrNotIdle) {
		t.Fatalf("Deliver(box on screen) = %v, want ErrNotIdle", err)
	}
	calls := rec.calls()[before:]
	argvIs(t, "screen", calls[len(calls)-1].argv, "@", "--to", sock, "get-text", "--match", "id:7")
}

func TestKittyRefuses(t *testing.T) {
	rec := kittyStandIn(t)
	ctx := context.Background()

	noRemote, _ := onTerminal(t, "KITTY_WINDOW_ID=7")
	if _, err := NewKitty().Locate(ctx, Target{PID: noRemote}); !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), "remote control is off") {
		t.Errorf("Locate(remote control off) = %v", err)
	}
	if len(rec.calls()) != 0 {
		t.Errorf("kitty was asked although remote control is off: %+v", rec.calls())
	}

	const sock = "unix:/tmp/kitty-nudge-test"
	pid, _ := onTerminal(t, "KITTY_LISTEN_ON="+sock)
	rec.reply("ls.json", kittyWindows(`{"id":2,"pid":1,"foreground_processes":[{"pid":1}]}`))
	if _, err := NewKitty().Locate(ctx, Target{PID: pid}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("Locate(no window holds the agent) = %v, want ErrNotInTerminal", err)
	}

	rec.reply("ls.json", kittyWindows(fmt.Sprintf(`{"id":7,"pid":%d,"foreground_processes":[]}`, pid)))
	w, err := NewKitty().Locate(ctx, Target{PID: pid})
	if err != nil {
		t.Fatalf("Locate(agent is the window's process): %v", err)
	}
	// The window now runs another process: pane reuse.
	rec.reply("ls.json", kittyWindows(`{"id":7,"pid":1,"foreground_processes":[{"pid":1}]}`))
	if err := NewKitty().Send(ctx, w, "continue"); !errors.Is(err, ErrOtherProcess) {
		t.Errorf("Send(window reused) = %v, want ErrOtherProcess", err)
	}
	for _, c := range rec.calls() {
		if c.argv[3] == "send-text" {
			t.Errorf("typed: %q", c.argv)
		}
	}
}
