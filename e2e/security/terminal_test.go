package security

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"nudge/e2e/daemontest"
)

// hostile is text from an agent's records that would steer a terminal
// printed raw: OSC 52 writes the clipboard, OSC 0 the window title, OSC 8
// hides a link's target, CSI clears the screen, C1 CSI the same in one
// byte, and a bidi override reverses what follows.
const hostile = "\x1b]52;c;ZWNobyBvd25lZA==\x07\x1b]0;owned\x1b\\\x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\\x1b[2J\u009b2J\u202egnp.exe"

// TestTerminalEscapesNeverReachTheTerminal: an error text and a project
// folder carrying terminal escapes reach the Inbox through the real
// pipe; every human view prints them inert, and --json keeps them exact,
// every control and bidi character written as a \u escape.
func TestTerminalEscapesNeverReachTheTerminal(t *testing.T) {
	w := newWorld(t, "NUDGE_RETRY_ENABLED=false")
	d := w.start()
	const session = "5e1c0a3b-5555-4555-8555-666666666666"
	cwd := "/work/shop" + hostile
	errorText := "API Error: 401 " + hostile + "\nsecond line " + hostile
	w.signInFailure(session, cwd, errorText)
	daemontest.Eventually(t, "the Inbox entry", 20*time.Second, func() bool { return len(w.entries()) == 1 })

	// JSON is exact: the text as the agent wrote it.
	if e := w.entries()[0]; e.ErrorText != errorText || e.Project != cwd {
		t.Errorf("--json changed the text: %q, project %q", e.ErrorText, e.Project)
	}
	var st struct{ Sessions []struct{ Project string } }
	out, err := w.nudge("status", "--json")
	must(t, err)
	must(t, json.Unmarshal(out, &st))
	if len(st.Sessions) != 1 || st.Sessions[0].Project != cwd {
		t.Errorf("status --json: %s", out)
	}

	transcript := filepath.Join(w.home, ".claude", "projects", "-work-shop", session+".jsonl")
	views := [][]string{{"inbox"}, {"status"}, {"explain", session[:8]}, {"doctor"},
		{"inbox", "--json"}, {"status", "--json"}, {"explain", session[:8], "--json"}, {"classify", "--json", "--why", transcript}}
	check := func(when string) {
		for _, args := range views {
			out, err := w.nudge(args...)
			if err != nil {
				t.Fatalf("nudge %v %s: %v", args, when, err)
			}
			text := string(out)
			if i := strings.IndexFunc(text, steers); i >= 0 || !utf8.ValidString(text) {
				t.Errorf("nudge %v %s prints %q at %d:\n%q", args, when, text[i:min(i+8, len(text))], i, text)
			}
			if !strings.Contains(text, "shop") && !strings.Contains(text, "API Error: 401") {
				t.Errorf("nudge %v %s does not show the session:\n%s", args, when, text)
			}
		}
	}
	check("with the daemon running")
	if out, _ := w.nudge("inbox"); !strings.Contains(string(out), "]52;c;ZWNobyBvd25lZA==") || !strings.Contains(string(out), "\n  │ second line") {
		t.Errorf("nudge inbox hides the text instead of showing it inert, its second line marked as the entry's:\n%s", out)
	}
	_, err = w.nudge("quit")
	must(t, err)
	// The process gone, not an answer saying so: a daemon that is stopping
	// still answers on its socket, "nudge is not running" among its answers.
	if code := d.Exit(t); code != 0 {
		t.Fatalf("nudge quit: the daemon exited %d", code)
	}
	check("from the database")
	// An error naming the session is plain too (what follows the exit status is its stderr).
	_, err = w.nudge("explain", "x"+hostile)
	if _, stderr, _ := strings.Cut(fmt.Sprint(err), "exit status 1: "); stderr == "" || strings.IndexFunc(stderr, steers) >= 0 {
		t.Errorf("an unknown session: %q", err)
	}
}

// steers reports a character that can steer a terminal: a control
// character other than newline, or a bidi control.
func steers(r rune) bool {
	switch {
	case r == '\n':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
