package inject

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"nudge/internal/classify"
	"nudge/internal/proc"
)

// Tmux types into the tmux pane that holds the agent process
// (docs/platform.md §7). The text goes through a named buffer and paste-buffer,
// so tmux's command parser never sees it (an argument ending in ";" would
// be cut) and no shell is ever involved.
type Tmux struct {
	program string
}

var (
	_ Backend  = (*Tmux)(nil)
	_ Screener = (*Tmux)(nil)
	_ Careter  = (*Tmux)(nil)
	_ Attender = (*Tmux)(nil)
)

// NewTmux returns the tmux backend, running the tmux found in PATH.
func NewTmux() *Tmux { return &Tmux{program: "tmux"} }

// Name is "tmux".
func (*Tmux) Name() string { return "tmux" }

// paneFormat lists what Locate and Send need of every pane; the tty goes
// last because it is the only free-form field.
const paneFormat = "#{pane_id} #{pane_pid} #{pane_in_mode} #{pane_dead} #{pane_tty}"

// pane is one line of `list-panes -a -F paneFormat`.
type pane struct {
	id     string // "%3"
	pid    int    // the process tmux started in the pane
	inMode bool   // copy mode or another mode that swallows keys
	dead   bool   // its process exited (remain-on-exit)
	tty    string // "/dev/pts/4"
}

// Locate finds the pane of the agent's tmux server that holds t.PID: the
// registry's pane if t names one, else the pane on the agent's terminal.
// Either way the pane's terminal must be the agent's and the agent must be
// the pane's process or descend from it.
func (x *Tmux) Locate(ctx context.Context, t Target) (Where, error) {
	agent, err := agentProcess(t)
	if err != nil {
		return Where{}, err
	}
	socket, err := tmuxServer(t.PID)
	if err != nil {
		return Where{}, err
	}
	if agent.TTY == "" {
		return Where{}, refuse(ErrNotInTerminal, "pid %d has no terminal", t.PID)
	}
	panes, err := x.panes(ctx, socket)
	if err != nil {
		return Where{}, err
	}
	var found *pane
	if t.TmuxPane != "" {
		id, err := paneID(t.TmuxPane)
		if err != nil {
			return Where{}, err
		}
		p, ok := lookupPane(panes, id)
		if !ok {
			return Where{}, refuse(ErrGone, "pane %s is gone from tmux server %s", id, socket)
		}
		if err := holds(p, agent); err != nil {
			return Where{}, err
		}
		found = &p
	} else {
		for _, p := range panes {
			if holds(p, agent) == nil {
				found = &p
				break
			}
		}
		if found == nil {
			return Where{}, refuse(ErrNotInTerminal, "no pane of tmux server %s holds pid %d", socket, t.PID)
		}
	}
	return Where{Server: socket, Pane: found.id, PID: agent.PID, Started: agent.Started, PanePID: found.pid}, nil
}

// Send re-verifies the pane (still there, same pane process, same agent
// process by pid and start time, not in copy mode), then pastes text
// through a named buffer and, once the pane shows it, presses Enter.
func (x *Tmux) Send(ctx context.Context, w Where, text string) error {
	if text == "" {
		return errors.New("empty continuation text")
	}
	if err := x.verify(ctx, w); err != nil {
		return err
	}
	paste := func() error {
		buffer := "nudge-" + rand.Text()
		if _, err := x.run(ctx, w.Server, strings.NewReader(text), "load-buffer", "-b", buffer, "-"); err != nil {
			return err
		}
		// -d deletes the buffer, -r keeps LF as LF, -p brackets the paste when
		// the application asked for bracketed paste (docs/platform.md §7).
		if _, err := x.run(ctx, w.Server, nil, "paste-buffer", "-d", "-r", "-p", "-b", buffer, "-t", w.Pane); err != nil {
			_, _ = x.run(context.WithoutCancel(ctx), w.Server, nil, "delete-buffer", "-b", buffer)
			return err
		}
		return nil
	}
	return typeThenEnter(ctx, x, w, text, paste, func() error {
		_, err := x.run(ctx, w.Server, nil, "send-keys", "-t", w.Pane, "Enter")
		return err
	})
}

// verify checks that w still holds the process it was located for and can
// take keys now.
func (x *Tmux) verify(ctx context.Context, w Where) error {
	panes, err := x.panes(ctx, w.Server)
	if err != nil {
		if !serverRunning(w.Server) {
			return refuse(ErrGone, "pane %s is gone (tmux server %s stopped)", w.Pane, w.Server)
		}
		return err
	}
	p, ok := lookupPane(panes, w.Pane)
	if !ok {
		return refuse(ErrGone, "pane %s is gone", w.Pane)
	}
	if p.pid != w.PanePID {
		return refuse(ErrOtherProcess, "pane %s now belongs to another process (pid %d, was %d)", w.Pane, p.pid, w.PanePID)
	}
	agent, err := sameRun(w, "pane "+w.Pane)
	if err != nil {
		return err
	}
	if err := holds(p, agent); err != nil {
		return err
	}
	if p.inMode {
		return refuse(ErrCopyMode, "pane %s is in copy mode", w.Pane)
	}
	return nil
}

// holds checks that pane p is agent's: same terminal, and agent is the
// pane's process or descends from it.
func holds(p pane, agent proc.Process) error {
	if p.dead {
		return refuse(ErrGone, "pane %s is gone (its process exited)", p.id)
	}
	same, err := proc.OnTTY(agent, p.tty)
	if err != nil {
		return fmt.Errorf("pane %s: %w", p.id, err)
	}
	if !same {
		return refuse(ErrOtherProcess, "pane %s now belongs to another process (pid %d is not on %s)", p.id, agent.PID, p.tty)
	}
	under, err := descendsFrom(agent.PID, p.pid)
	if err != nil {
		return fmt.Errorf("pane %s: %w", p.id, err)
	}
	if !under {
		return refuse(ErrOtherProcess, "pane %s now belongs to another process (pid %d is not under pane process %d)", p.id, agent.PID, p.pid)
	}
	return nil
}

// panes lists every pane of the server at socket.
func (x *Tmux) panes(ctx context.Context, socket string) ([]pane, error) {
	out, err := x.run(ctx, socket, nil, "list-panes", "-a", "-F", paneFormat)
	if err != nil {
		return nil, err
	}
	var panes []pane
	for line := range strings.Lines(out) {
		f := strings.SplitN(strings.TrimRight(line, "\n"), " ", 5)
		if len(f) < 5 {
			return nil, fmt.Errorf("tmux server %s: unexpected pane line %q", socket, line)
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, fmt.Errorf("tmux server %s: pane pid in %q: %w", socket, line, err)
		}
		panes = append(panes, pane{id: f[0], pid: pid, inMode: f[2] == "1", dead: f[3] == "1", tty: f[4]})
	}
	return panes, nil
}

// run runs tmux against the server at socket with argv args (never a shell).
func (x *Tmux) run(ctx context.Context, socket string, stdin io.Reader, args ...string) (string, error) {
	return runProgram(ctx, nil, stdin, x.program, append([]string{"-S", socket}, args...)...)
}

// serverRunning reports whether a tmux server accepts connections on socket;
// a stopped server leaves its socket file behind.
func serverRunning(socket string) bool {
	c, err := net.Dial("unix", socket)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

func lookupPane(panes []pane, id string) (pane, bool) {
	for _, p := range panes {
		if p.id == id {
			return p, true
		}
	}
	return pane{}, false
}

// paneID returns the pane id ("%3") of a registry value: "%3" itself or
// Claude Code's "sess:@win.%pane" (docs/agents/claude.md §7.1).
func paneID(s string) (string, error) {
	id := s[strings.LastIndexByte(s, '%')+1:]
	if _, err := strconv.ParseUint(id, 10, 32); err != nil || !strings.Contains(s, "%") {
		return "", fmt.Errorf("registry tmux value %q names no pane", s)
	}
	return "%" + id, nil
}

// tmuxSocket returns the socket path of a TMUX=<socket>,<server pid>,<session>
// value; the path itself may contain commas.
func tmuxSocket(pid int, value string) (string, error) {
	i := strings.LastIndexByte(value, ',')
	if i < 0 {
		return "", refuse(ErrNotInTerminal, "pid %d is not in tmux (TMUX=%q)", pid, value)
	}
	j := strings.LastIndexByte(value[:i], ',')
	if j <= 0 {
		return "", refuse(ErrNotInTerminal, "pid %d is not in tmux (TMUX=%q)", pid, value)
	}
	return value[:j], nil
}

// Screen returns the visible text of the pane (capture-pane -p).
func (x *Tmux) Screen(ctx context.Context, w Where) (string, error) {
	return x.run(ctx, w.Server, nil, "capture-pane", "-p", "-t", w.Pane)
}

// Caret is where the pane's cursor sits (#{cursor_x}, #{cursor_y}); an
// agent that draws its own caret still moves the terminal's there.
func (x *Tmux) Caret(ctx context.Context, w Where) (classify.Caret, error) {
	out, err := x.run(ctx, w.Server, nil, "display-message", "-p", "-t", w.Pane, "#{cursor_x} #{cursor_y}")
	if err != nil {
		return classify.Caret{}, err
	}
	var c classify.Caret
	if _, err := fmt.Sscanf(out, "%d %d", &c.Col, &c.Row); err != nil {
		return classify.Caret{}, fmt.Errorf("tmux server %s: cursor of pane %s in %q: %w", w.Server, w.Pane, out, err)
	}
	c.Known = true
	return c, nil
}

// Attended tells the pane's mode (copy mode and the like, #{pane_mode})
// and the last key a person pressed in a client that shows the pane's
// window (#{client_activity}, whole seconds).
func (x *Tmux) Attended(ctx context.Context, w Where) (Attention, error) {
	out, err := x.run(ctx, w.Server, nil, "display-message", "-p", "-t", w.Pane, "#{window_id} #{pane_in_mode} #{pane_mode}")
	if err != nil {
		return Attention{}, err
	}
	f := strings.Fields(out)
	if len(f) < 2 {
		return Attention{}, fmt.Errorf("tmux server %s: unexpected answer %q for pane %s", w.Server, out, w.Pane)
	}
	var att Attention
	if f[1] == "1" {
		att.Mode = "copy mode"
		if len(f) > 2 && f[2] != "copy-mode" {
			att.Mode = f[2]
		}
	}
	clients, err := x.run(ctx, w.Server, nil, "list-clients", "-F", "#{window_id} #{client_activity}")
	if err != nil {
		return Attention{}, err
	}
	for line := range strings.Lines(clients) {
		c := strings.Fields(line)
		if len(c) != 2 || c[0] != f[0] {
			continue
		}
		if sec, err := strconv.ParseInt(c[1], 10, 64); err == nil {
			if t := time.Unix(sec, 0); t.After(att.LastKey) {
				att.LastKey = t
			}
		}
	}
	return att, nil
}

func init() {
	register(registration{
		name: "tmux", rank: rankTmux,
		available: func(Options) bool { return installed("tmux") },
		build:     func(Options) Backend { return NewTmux() },
	})
}
