package inject

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
)

// AppleScript types into a macOS terminal application (iTerm2,
// Terminal.app) through `osascript`, with the script on stdin: the session
// is found by the agent's terminal device, and the text is embedded as an
// AppleScript string literal (appleString), never through a shell.
type AppleScript struct {
	name    string // "iterm2"
	app     string // the application's AppleScript name: "iTerm2"
	program string // "osascript"
	// each is the loop header that visits every session as s and whose
	// matching "end repeat" lines close it.
	each, end string
	// send and screen are the statements run on the matched session s.
	send   func(text string) string
	screen string
}

var _ Screener = (*AppleScript)(nil)

// NewITerm returns the iTerm2 backend: `write text` types the text and a
// newline (Enter) into the session.
func NewITerm() *AppleScript {
	return &AppleScript{
		name: "iterm2", app: "iTerm2", program: "osascript",
		each: "repeat with w in windows\nrepeat with t in tabs of w\nrepeat with s in sessions of t",
		end:  "end repeat\nend repeat\nend repeat",
		send: func(text string) string { return "tell s to write text " + appleString(text) },
		// iTerm2's session "contents" is its visible text.
		screen: "contents of s",
	}
}

// NewTerminal returns the Terminal.app backend: `do script … in` types the
// text and Return into the tab.
func NewTerminal() *AppleScript {
	return &AppleScript{
		name: "terminal", app: "Terminal", program: "osascript",
		each:   "repeat with w in windows\nrepeat with s in tabs of w",
		end:    "end repeat\nend repeat",
		send:   func(text string) string { return "do script " + appleString(text) + " in s" },
		screen: "contents of s",
	}
}

func init() {
	onMac := func(Options) bool { return runtime.GOOS == "darwin" && installed("osascript") }
	register(registration{name: "iterm2", rank: rankITerm, available: onMac, build: func(Options) Backend { return NewITerm() }})
	register(registration{name: "terminal", rank: rankTerminal, available: onMac, build: func(Options) Backend { return NewTerminal() }})
}

// Name is "iterm2" or "terminal".
func (a *AppleScript) Name() string { return a.name }

// Answers the scripts print.
const (
	appleFound   = "found"
	appleMissing = "missing"
	appleSent    = "sent"
)

// Locate asks the application whether one of its sessions is on the
// agent's terminal; an application that is not running is not started.
func (a *AppleScript) Locate(ctx context.Context, t Target) (Where, error) {
	agent, tty, err := agentOnTerminal(t)
	if err != nil {
		return Where{}, err
	}
	out, err := a.onSession(ctx, tty, "", appleString(appleFound))
	if err != nil {
		return Where{}, err
	}
	if out != appleFound {
		return Where{}, refuse(ErrNotInTerminal, "no %s session is on %s (pid %d's terminal)", a.app, tty, t.PID)
	}
	return Where{Server: a.app, Pane: tty, PID: agent.PID, Started: agent.Started}, nil
}

// Send re-verifies the agent process (same run, still on the session's
// terminal), then types text and Enter into the session on that terminal.
func (a *AppleScript) Send(ctx context.Context, w Where, text string) error {
	if text == "" {
		return errors.New("empty continuation text")
	}
	if err := sameAgent(w, w.Pane); err != nil {
		return err
	}
	out, err := a.onSession(ctx, w.Pane, a.send(text), appleString(appleSent))
	if err != nil {
		return err
	}
	if out != appleSent {
		return refuse(ErrGone, "the %s session on %s is gone", a.app, w.Pane)
	}
	return nil
}

// Screen returns the session's visible text.
func (a *AppleScript) Screen(ctx context.Context, w Where) (string, error) {
	out, err := a.onSession(ctx, w.Pane, "", a.screen)
	if err != nil {
		return "", err
	}
	if out == appleMissing {
		return "", refuse(ErrGone, "the %s session on %s is gone", a.app, w.Pane)
	}
	return out, nil
}

// onSession runs a script that finds the session s on tty, runs statement
// there (if any) and returns value, an expression; it returns appleMissing
// when no session is on tty.
func (a *AppleScript) onSession(ctx context.Context, tty, statement, value string) (string, error) {
	var b strings.Builder
	app := appleString(a.app)
	fmt.Fprintf(&b, "if application %s is not running then return %s\n", app, appleString(appleMissing))
	fmt.Fprintf(&b, "tell application %s\n%s\n", app, a.each)
	fmt.Fprintf(&b, "if tty of s is %s then\n", appleString(tty))
	if statement != "" {
		b.WriteString(statement + "\n")
	}
	fmt.Fprintf(&b, "return %s\nend if\n%s\nend tell\nreturn %s\n", value, a.end, appleString(appleMissing))
	out, err := runProgram(ctx, nil, strings.NewReader(b.String()), a.program)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(out, "\n"), nil
}

// appleString is s as an AppleScript string expression: a quoted literal
// with \ and " escaped, and every control character joined in as
// (character id N), in parentheses, so no byte of s can end the literal or
// the statement.
func appleString(s string) string {
	var b strings.Builder
	open, joined := false, false
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			joined = true
			if open {
				b.WriteString(`" & `)
				open = false
			} else if b.Len() > 0 {
				b.WriteString(" & ")
			}
			fmt.Fprintf(&b, "(character id %d)", r)
			continue
		}
		if !open {
			if b.Len() > 0 {
				b.WriteString(" & ")
			}
			b.WriteByte('"')
			open = true
		}
		if r == '\\' || r == '"' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	if open {
		b.WriteByte('"')
	}
	out := b.String()
	switch {
	case out == "":
		return `""`
	case joined:
		return "(" + out + ")"
	}
	return out
}
