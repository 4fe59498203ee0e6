// Package wrap runs an agent in a pseudo-terminal that passes the person's
// terminal through untouched, and lets nudge type into it over a user-only
// Unix socket: the way to continue sessions in terminals that offer no
// scripting API.
package wrap

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"

	"nudge/internal/echo"
	"nudge/internal/usersock"
)

// Options says what to run and where.
type Options struct {
	// Command is the program and its arguments.
	Command []string
	// DataDir is nudge's data folder; the socket goes in Dir(DataDir).
	DataDir string
	// Stdin, Stdout and Stderr are the person's terminal (or pipes).
	// Stderr only carries the wrapper's own warnings, before the command
	// takes the terminal.
	Stdin, Stdout, Stderr *os.File
	// Log receives what happens after the command took the terminal; nil
	// discards it.
	Log *slog.Logger
}

// drainGap bounds how long the output is still copied after the command
// exited, when a process it left behind keeps the terminal open.
const drainGap = time.Second

// defaultSize is the terminal size when the person's side is no terminal.
var defaultSize = pty.Winsize{Rows: 24, Cols: 80}

// session is one running command and its pseudo-terminal.
type session struct {
	ptmx    *os.File
	tty     string
	cmd     *exec.Cmd
	started time.Time
	dir     string
	paste   pasteMode
	shown   shownWatch
	exited  atomic.Bool
	keys    sync.Mutex // one writer to the terminal at a time: the person or nudge
	person  keysSeen
}

// Run starts opts.Command on a new pseudo-terminal, passes the person's
// input to it and its output back until it exits, and returns its exit
// status (128+signal when a signal ended it). A person's terminal is put
// in raw mode and restored on return. An error means the command could
// not be started; a socket that cannot be opened is only a warning.
func Run(opts Options) (int, error) {
	if len(opts.Command) == 0 {
		return 0, errors.New("no command to run")
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		return 0, fmt.Errorf("pseudo-terminal: %w", err)
	}
	defer ptmx.Close()
	outer := opts.Stdin
	if !isTerminal(outer) {
		outer = opts.Stdout
	}
	size, err := pty.GetsizeFull(outer)
	if err != nil {
		size = &defaultSize
	}
	if err := pty.Setsize(ptmx, size); err != nil {
		tty.Close()
		return 0, fmt.Errorf("pseudo-terminal size: %w", err)
	}
	dir, _ := os.Getwd()
	s := &session{ptmx: ptmx, tty: tty.Name(), dir: dir}
	s.cmd = exec.Command(opts.Command[0], opts.Command[1:]...)
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = tty, tty, tty
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	// Signals arrive from now on, so none kills the wrapper before the
	// child can be told.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGWINCH, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer func() {
		signal.Stop(sigs)
		close(sigs)
	}()
	err = s.cmd.Start()
	tty.Close()
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", opts.Command[0], err)
	}
	s.started = time.Now()

	path := SocketPath(opts.DataDir, os.Getpid())
	if err := prepareDir(opts.DataDir, log); err != nil {
		fmt.Fprintf(opts.Stderr, "nudge wrap: nudge cannot type into this session: %v\n", err)
	} else if ln, err := usersock.Listen(path, log); err != nil {
		fmt.Fprintf(opts.Stderr, "nudge wrap: nudge cannot type into this session: %v\n", err)
	} else {
		defer serve(ln, path, s, log)()
		log.Info("wrapping", "command", opts.Command, "pid", s.cmd.Process.Pid, "tty", s.tty, "socket", path)
	}

	restore := func() error { return nil }
	if isTerminal(opts.Stdin) {
		if restore, err = makeRaw(opts.Stdin); err != nil {
			fmt.Fprintf(opts.Stderr, "nudge wrap: %v\n", err)
			restore = func() error { return nil }
		}
	}
	var once sync.Once
	restoreOnce := func() {
		once.Do(func() {
			if err := restore(); err != nil {
				log.Warn("terminal", "err", err)
			}
		})
	}
	defer restoreOnce()
	// A panic anywhere gives the person their terminal back first.
	guard := func() {
		if r := recover(); r != nil {
			restoreOnce()
			panic(r)
		}
	}
	defer guard()

	go func() {
		defer guard()
		s.relaySignals(sigs, opts.Stdin, opts.Stdout, log)
	}()
	go func() {
		defer guard()
		s.copyInput(opts.Stdin, log)
	}()
	output := make(chan struct{})
	go func() {
		defer guard()
		defer close(output)
		s.copyOutput(opts.Stdout, log)
	}()

	_ = s.cmd.Wait() // its outcome is in ProcessState
	s.exited.Store(true)
	select {
	case <-output:
	case <-time.After(drainGap):
		log.Info("the command left a process holding its terminal; not waiting for its output", "tty", s.tty)
	}
	return exitStatus(s.cmd.ProcessState), nil
}

// exitStatus is the child's exit code, or 128+signal when a signal ended it.
func exitStatus(st *os.ProcessState) int {
	if st == nil {
		return 1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if code := st.ExitCode(); code >= 0 {
		return code
	}
	return 1
}

// relaySignals passes what the wrapper receives on to the child: a new
// window size to the pseudo-terminal; SIGINT and SIGQUIT to the
// terminal's foreground process group, as a Ctrl-C there would; SIGTERM
// and SIGHUP to the child's process group.
func (s *session) relaySignals(sigs <-chan os.Signal, stdin, stdout *os.File, log *slog.Logger) {
	for sig := range sigs {
		switch sig {
		case syscall.SIGWINCH:
			if err := s.resize(stdin, stdout); err != nil {
				log.Warn("window size", "err", err)
			}
		case syscall.SIGINT, syscall.SIGQUIT:
			group, err := foreground(s.ptmx)
			if err != nil || group <= 0 {
				group = s.cmd.Process.Pid
			}
			s.signal(group, sig.(syscall.Signal), log)
		default:
			s.signal(s.cmd.Process.Pid, sig.(syscall.Signal), log)
		}
	}
}

// signal sends sig to the process group group, or to the child alone if
// the group is gone.
func (s *session) signal(group int, sig syscall.Signal, log *slog.Logger) {
	if err := syscall.Kill(-group, sig); err != nil {
		if err := s.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			log.Warn("forward signal", "signal", sig, "err", err)
		}
	}
}

// resize gives the pseudo-terminal the person's terminal size.
func (s *session) resize(stdin, stdout *os.File) error {
	for _, f := range []*os.File{stdin, stdout} {
		if isTerminal(f) {
			return pty.InheritSize(f, s.ptmx)
		}
	}
	return nil
}

// copyInput passes the person's keys to the child until their input ends.
// The end of a piped input is not passed on: the child keeps its terminal,
// so nudge can still type into it.
func (s *session) copyInput(stdin *os.File, log *slog.Logger) {
	buf := make([]byte, 32<<10)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			s.keys.Lock()
			s.person.typed(buf[:n], time.Now())
			_, werr := s.ptmx.Write(buf[:n])
			s.keys.Unlock()
			if werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				log.Info("input ended", "err", err)
			}
			return
		}
	}
}

// copyOutput passes the child's output to the person and follows its
// bracketed-paste switch, until the terminal closes. Once the person's side
// fails (their terminal went away), the output is still read, so the child
// never blocks on a full terminal.
func (s *session) copyOutput(stdout *os.File, log *slog.Logger) {
	buf := make([]byte, 32<<10)
	drawn := make([]byte, 0, len(buf))
	failed := false
	for {
		n, err := s.ptmx.Read(buf)
		if n > 0 {
			if s.shown.watching() {
				drawn = s.paste.scan(buf[:n], drawn[:0])
				s.shown.drew(drawn)
			} else {
				s.paste.scan(buf[:n], nil)
			}
			if !failed {
				if _, werr := stdout.Write(buf[:n]); werr != nil {
					log.Warn("output", "err", werr)
					failed = true
				}
			}
		}
		if err != nil {
			return // EIO once the child and everything it left closed the terminal
		}
	}
}

func (s *session) info() Info {
	last, unsent := s.person.seen()
	return Info{
		PID: os.Getpid(), ChildPID: s.cmd.Process.Pid, TTY: s.tty,
		Command: s.cmd.Args, Dir: s.dir, Started: s.started,
		BracketedPaste: s.paste.Bracketed(),
		LastKey:        last, Unsent: unsent,
	}
}

// typeText writes text to the terminal exactly as given (bracketed when
// the child asked for bracketed paste), then Enter ("\r") once the child
// drew the text, or after echo.Wait: a TUI that reads text and "\r" in one
// chunk can take the "\r" as part of a paste (docs/platform.md §7). The
// person's keys wait meanwhile, so none lands between the two; nothing is
// typed if they have keys unsent or pressed one within quietFor.
func (s *session) typeText(childPID int, text string, quietFor, settle time.Duration) error {
	if childPID != s.cmd.Process.Pid {
		return fmt.Errorf("%w: pid %d, not %d", ErrOtherChild, s.cmd.Process.Pid, childPID)
	}
	s.keys.Lock()
	defer s.keys.Unlock()
	if s.exited.Load() {
		return fmt.Errorf("%w: pid %d", ErrChildGone, childPID)
	}
	if !s.person.quiet(time.Now(), quietFor) {
		return fmt.Errorf("%w: %s", ErrInUse, s.tty)
	}
	data := []byte(text)
	if s.paste.Bracketed() {
		data = bracket(data)
	}
	shown := s.shown.expect(echo.Of(text))
	defer s.shown.stop()
	if _, err := s.ptmx.Write(data); err != nil {
		return fmt.Errorf("type into %s: %w", s.tty, err)
	}
	select {
	case <-shown:
	case <-time.After(echo.Wait):
	}
	if settle > 0 {
		time.Sleep(min(settle, maxSettle)) // the person's keys wait too: nothing comes between
	}
	if _, err := s.ptmx.Write([]byte("\r")); err != nil {
		return fmt.Errorf("press Enter in %s: %w", s.tty, err)
	}
	return nil
}
