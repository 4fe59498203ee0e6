package inject

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// osascriptStandIn answers like the terminal application would: a send
// script with "sent", a screen script with $D/screen, a find script with
// "found" when the script asks for the terminal in $D/tty.
func osascriptStandIn(t *testing.T) *recorder {
	return standIn(t, "osascript", `s="$c/stdin"
if ! grep -qF "if tty of s is \"$(cat "$D/tty")\" then" "$s"; then echo missing
elif grep -q 'write text\|do script' "$s"; then echo sent
elif grep -q 'contents of s' "$s"; then cat "$D/screen"
else echo found; fi`)
}

func TestAppleScriptDelivers(t *testing.T) {
	rec := osascriptStandIn(t)
	pid, tty := onTerminal(t)
	rec.reply("tty", tty)
	ctx := context.Background()

	for _, b := range []*AppleScript{NewITerm(), NewTerminal()} {
		for _, text := range hostile {
			before := len(rec.calls())
			d, err := New(b).Deliver(ctx, Target{PID: pid}, text)
			if err != nil {
				t.Fatalf("%s Deliver(%q): %v", b.Name(), text, err)
			}
			if d != (Delivery{Backend: b.Name(), Where: b.app + " " + tty}) {
				t.Errorf("Delivery = %+v", d)
			}
			calls := rec.calls()[before:]
			if len(calls) != 2 {
				t.Fatalf("%d osascript runs, want find and send", len(calls))
			}
			for _, c := range calls {
				argvIs(t, "osascript", c.argv, "")
				if !strings.HasPrefix(c.stdin, `if application "`+b.app+`" is not running then return "missing"`) {
					t.Errorf("script does not first check that %s runs (it would start it):\n%s", b.app, c.stdin)
				}
			}
			send := calls[1].stdin
			statement := map[string]string{"iterm2": "tell s to write text ", "terminal": "do script "}[b.Name()]
			i := strings.Index(send, statement)
			if i < 0 {
				t.Fatalf("send script lacks %q:\n%s", statement, send)
			}
			literal, _, _ := strings.Cut(send[i+len(statement):], "\n")
			if b.Name() == "terminal" {
				literal = strings.TrimSuffix(literal, " in s")
			}
			if back, err := parseAppleString(literal); err != nil || back != text {
				t.Errorf("%s typed %s, which reads back as %q (%v), want %q", b.Name(), literal, back, err, text)
			}
			if strings.Count(send, "\n") != strings.Count(calls[0].stdin, "\n")+1 {
				t.Errorf("the text added lines to the script:\n%s", send)
			}
		}
	}

	rec.reply("screen", "Would you like to run it?")
	if _, err := New(NewITerm()).Deliver(ctx, Target{PID: pid, ScreenReady: boxOnScreen}, "continue"); !errors.Is(err, ErrNotIdle) {
		t.Errorf("Deliver(box on screen) = %v, want ErrNotIdle", err)
	}
}

func TestAppleScriptRefuses(t *testing.T) {
	rec := osascriptStandIn(t)
	rec.reply("tty", "/dev/ttys999")
	pid, _ := onTerminal(t)
	ctx := context.Background()
	if _, err := NewITerm().Locate(ctx, Target{PID: pid}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("Locate(no session on the agent's terminal) = %v, want ErrNotInTerminal", err)
	}
	if _, err := NewTerminal().Locate(ctx, Target{}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("Locate(no process) = %v, want ErrNotInTerminal", err)
	}
	// The agent process restarted under the same pid: its start time differs.
	w := Where{Server: "iTerm2", Pane: "/dev/pts/0", PID: pid, Started: "1"}
	if err := NewITerm().Send(ctx, w, "continue"); !errors.Is(err, ErrOtherProcess) {
		t.Errorf("Send(other process) = %v, want ErrOtherProcess", err)
	}
	for _, c := range rec.calls() {
		if strings.Contains(c.stdin, "write text") {
			t.Errorf("typed: %s", c.stdin)
		}
	}
}
