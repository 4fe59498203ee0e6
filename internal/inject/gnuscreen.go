package inject

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"nudge/internal/proc"
)

// Screen types into the GNU screen window that holds the agent proc.Process,
// named by the STY (session) and WINDOW (window number) that screen puts in
// the environment of every window's process. Screen names no process for a
// window, so ownership is proven from the process table: the agent runs
// under the process screen started in the window (a child of the session's
// server, started with that WINDOW), on the same terminal. The text goes in
// with `stuff`, screen's own \, ^ and $ escaped, then, once the window
// shows it, Enter separately.
//
// Screen cannot report a window's copy mode, which takes the keys, and its
// hardcopy keeps one byte per character (see hardcopyText). A window
// renumbered with `:number` keeps its old WINDOW: a number claimed by two
// windows is refused, but two windows that swapped numbers are not told
// apart.
type Screen struct {
	program string
	// answerWait bounds the wait for the answer to one query (-Q).
	answerWait time.Duration
}

var _ Screener = (*Screen)(nil)

// NewScreen returns the screen backend, running the screen found in PATH.
func NewScreen() *Screen { return &Screen{program: "screen", answerWait: screenAnswerWait} }

// screenAnswerWait is how long a query's answer is waited for: screen
// answers in milliseconds, but its client can wait forever for an answer
// the server never sends (seen once, a window of the session just killed).
const screenAnswerWait = 3 * time.Second

func init() {
	register(registration{
		name: "screen", rank: rankScreen,
		available: func(Options) bool { return installed("screen") },
		build:     func(Options) Backend { return NewScreen() },
	})
}

// Name is "screen".
func (*Screen) Name() string { return "screen" }

// stuffChunk bounds one `stuff` argument: screen passes a command and its
// arguments in one fixed-size message.
const stuffChunk = 512

// Locate finds the window of the agent's screen session that holds t.PID.
func (x *Screen) Locate(ctx context.Context, t Target) (Where, error) {
	agent, tty, err := agentOnTerminal(t)
	if err != nil {
		return Where{}, err
	}
	sty, ok, err := processEnv(t.PID, "STY")
	if err != nil {
		return Where{}, fmt.Errorf("screen: %w", err)
	}
	if !ok {
		return Where{}, refuse(ErrNotInTerminal, "pid %d is not in screen (no STY in its environment)", t.PID)
	}
	window, ok, err := processEnv(t.PID, "WINDOW")
	if err != nil {
		return Where{}, fmt.Errorf("screen: %w", err)
	}
	if _, numErr := strconv.Atoi(window); !ok || numErr != nil {
		return Where{}, refuse(ErrNotInTerminal, "pid %d is in screen session %s but names no window (WINDOW=%q)", t.PID, sty, window)
	}
	server, err := screenServer(sty)
	if err != nil {
		return Where{}, err
	}
	dir, _, _ := processEnv(t.PID, "SCREENDIR")
	w := Where{Server: sty, Pane: window, PID: agent.PID, Started: agent.Started}
	if dir != "" {
		w.Server = filepath.Join(dir, sty)
	}
	pane, err := paneProcess(agent, func(ppid int) (bool, error) { return ppid == server, nil })
	if err != nil {
		return Where{}, refuse(ErrNotInTerminal, "pid %d does not run under screen session %s (server pid %d)", t.PID, sty, server)
	}
	w.PanePID = pane.PID
	if err := x.holds(ctx, w, agent, pane, tty); err != nil {
		return Where{}, err
	}
	return w, nil
}

// Send re-verifies the window (still there, same window process, same agent
// process on its terminal), then stuffs text and, once the window shows it,
// presses Enter.
func (x *Screen) Send(ctx context.Context, w Where, text string) error {
	if text == "" {
		return errors.New("empty continuation text")
	}
	if err := x.verify(ctx, w); err != nil {
		return err
	}
	stuff := func() error {
		for rest := text; rest != ""; {
			n := min(len(rest), stuffChunk)
			for n < len(rest) && n > 0 && !utf8.RuneStart(rest[n]) {
				n--
			}
			if _, err := x.run(ctx, w, "-p", w.Pane, "-X", "stuff", screenEscape(rest[:n])); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	}
	return typeThenEnter(ctx, x, w, text, stuff, func() error {
		_, err := x.run(ctx, w, "-p", w.Pane, "-X", "stuff", "^M")
		return err
	})
}

// Screen returns the window's visible text (`hardcopy` to a private file).
func (x *Screen) Screen(ctx context.Context, w Where) (string, error) {
	dir, err := os.MkdirTemp("", "nudge-screen-")
	if err != nil {
		return "", fmt.Errorf("screen hardcopy: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "window")
	if strings.ContainsAny(file, "$\\^") {
		return "", fmt.Errorf("screen hardcopy: unusable temporary folder %s", dir)
	}
	if _, err := x.run(ctx, w, "-p", w.Pane, "-X", "hardcopy", file); err != nil {
		return "", err
	}
	// -X returns before the server acted; a query is answered after it did.
	if _, err := x.windowNumber(ctx, w); err != nil {
		return "", err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("screen hardcopy of window %s: %w", w.Pane, err)
	}
	return hardcopyText(b), nil
}

// hardcopyText reads a screen hardcopy: one byte per cell, the low byte of
// the cell's character (screen 4), so U+0080–U+00FF come out right and a
// character past U+00FF comes out as another one. A screen check that
// needs such a character (Codex's "›" prompt) therefore refuses.
func hardcopyText(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// verify checks, at Send, that window w still holds the process it was
// located for.
func (x *Screen) verify(ctx context.Context, w Where) error {
	agent, pane, tty, err := reread(w, windowPlace(w))
	if err != nil {
		return err
	}
	return x.holds(ctx, w, agent, pane, tty)
}

// windowPlace names window w in messages.
func windowPlace(w Where) string { return "screen window " + w.Pane }

// holds checks that window w is agent's: screen lists the window, pane is
// the process screen started in it (a child of the session's server with
// w's WINDOW), and agent runs under pane on its terminal tty.
func (x *Screen) holds(ctx context.Context, w Where, agent, pane proc.Process, tty string) error {
	place := windowPlace(w)
	_, sty := screenSession(w.Server)
	server, err := screenServer(sty)
	if err != nil {
		return err
	}
	if pane.PPID != server {
		return refuse(ErrOtherProcess, "%s now belongs to another process (pid %d is not screen's)", place, pane.PID)
	}
	if v, _, _ := processEnv(pane.PID, "WINDOW"); v != w.Pane {
		return refuse(ErrOtherProcess, "%s now belongs to another process (pid %d was started in window %q)", place, pane.PID, v)
	}
	if n, err := windowClaims(ctx, server, w.Pane); err != nil || n != 1 {
		return refuse(ErrOtherProcess, "%s is claimed by %d processes of screen session %s (windows renumbered?), so which one is the agent's cannot be told", place, n, sty)
	}
	if err := underPane(agent, pane, tty, place); err != nil {
		return err
	}
	out, err := x.windowNumber(ctx, w)
	if err != nil {
		if processGone(server) {
			return refuse(ErrGone, "%s is gone (screen session %s ended)", place, sty)
		}
		return refuse(ErrGone, "%s is gone from screen session %s: %v", place, sty, err)
	}
	if n, _, _ := strings.Cut(strings.TrimSpace(out), " "); n != w.Pane {
		return refuse(ErrOtherProcess, "%s now belongs to another window (%q)", place, strings.TrimSpace(out))
	}
	return nil
}

// windowClaims counts the processes of the server that were started as
// window number window: two mean a window was renumbered and the number
// no longer tells the agent's window.
func windowClaims(ctx context.Context, server int, window string) (int, error) {
	all, err := proc.List(ctx)
	if err != nil {
		return 0, fmt.Errorf("listing processes: %w", err)
	}
	n := 0
	for _, c := range all {
		if c.PPID != server {
			continue
		}
		if v, _, _ := processEnv(c.PID, "WINDOW"); v == window {
			n++
		}
	}
	return n, nil
}

// windowNumber asks screen for window w.Pane's number and title; a query
// left unanswered for answerWait is asked once more.
func (x *Screen) windowNumber(ctx context.Context, w Where) (string, error) {
	var err error
	for range 2 {
		qctx, cancel := context.WithTimeout(ctx, x.answerWait)
		var out string
		out, err = x.run(qctx, w, "-p", w.Pane, "-Q", "number")
		unanswered := qctx.Err() != nil
		cancel()
		if err == nil || !unanswered || ctx.Err() != nil {
			return out, err
		}
	}
	return "", fmt.Errorf("screen window %s: no answer to two queries of %v: %w", w.Pane, x.answerWait, err)
}

// run runs screen against w's session with argv args (never a shell).
func (x *Screen) run(ctx context.Context, w Where, args ...string) (string, error) {
	dir, sty := screenSession(w.Server)
	var env []string
	if dir != "" {
		env = []string{"SCREENDIR=" + dir}
	}
	return runProgram(ctx, env, nil, x.program, append([]string{"-S", sty}, args...)...)
}

// screenSession splits a Where.Server into the socket folder (SCREENDIR,
// "" for screen's default) and the session (STY).
func screenSession(server string) (dir, sty string) {
	if i := strings.LastIndexByte(server, '/'); i >= 0 {
		return server[:i], server[i+1:]
	}
	return "", server
}

// screenServer is the pid of the server of session sty ("<pid>.<name>").
func screenServer(sty string) (int, error) {
	pid, err := strconv.Atoi(sty[:max(strings.IndexByte(sty, '.'), 0)])
	if err != nil || pid <= 1 {
		return 0, refuse(ErrNotInTerminal, "screen session %q names no server process", sty)
	}
	return pid, nil
}

// processGone reports whether pid no longer runs.
func processGone(pid int) bool {
	_, err := readProcess(pid)
	return errors.Is(err, ErrGone)
}

// screenEscape makes text reach the window as is through `stuff`, which
// reads \ escapes (octal codes), ^X as control characters and $VAR as
// variables.
func screenEscape(text string) string {
	var b strings.Builder
	for _, r := range text {
		if r == '\\' || r == '^' || r == '$' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
