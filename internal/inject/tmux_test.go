//go:build linux

package inject

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"nudge/internal/testenv"
)

// deadline bounds every wait for an effect inside tmux.
const deadline = 10 * time.Second

// server is a private tmux server for one test, killed in Cleanup.
type server struct {
	t      testing.TB
	dir    string
	socket string
	env    []string
}

// newServer starts nothing yet: the first session starts the server.
func newServer(t testing.TB) *server {
	t.Helper()
	testenv.Need(t, "tmux")
	// A short folder: a unix socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "nudge-tmux-")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, dir: dir, socket: filepath.Join(dir, "sock"), env: withoutTmux(os.Environ())}
	s.env = append(s.env, "SHELL=/bin/sh")
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-S", s.socket, "kill-server").Run()
		_ = os.RemoveAll(dir)
	})
	return s
}

// withoutTmux drops TMUX from env, so nothing here leaks the caller's server.
func withoutTmux(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") && !strings.HasPrefix(kv, "SHELL=") {
			out = append(out, kv)
		}
	}
	return out
}

// tmux runs a tmux command on the server and returns its output.
func (s *server) tmux(args ...string) string {
	s.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", s.socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// testPane is a pane running a shell command of the test.
type testPane struct {
	id  string // "%0"
	pid int    // pane_pid
	out string // the file the pane's command writes what it receives to
}

// start opens session name running script once the pane's terminal is set
// up; $OUT names the pane's output file. It returns when the script is
// ready to read.
func (s *server) start(name, script string) testPane {
	s.t.Helper()
	out := filepath.Join(s.dir, name+".out")
	ready := filepath.Join(s.dir, name+".ready")
	script = strings.ReplaceAll(script, "$OUT", "'"+out+"'")
	script = strings.Replace(script, "; ", "; : > '"+ready+"'; ", 1)
	line := s.tmux("new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-P", "-F", "#{pane_id} #{pane_pid}", script)
	id, pidText, _ := strings.Cut(line, " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		s.t.Fatalf("new-session printed %q", line)
	}
	waitFor(s.t, "pane "+id+" ready", func() bool { _, err := os.Stat(ready); return err == nil })
	return testPane{id: id, pid: pid, out: out}
}

// cat starts a pane that writes what it receives to $OUT, its terminal
// echoing it as an application draws what it reads (the
// docs/platform.md §7 recipe); Enter arrives there as "\n".
func (s *server) cat(name string) testPane {
	return s.start(name, "stty echo; cat > $OUT")
}

func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !ok() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// received waits until p's output file holds want and fails if it holds
// anything else.
func received(t *testing.T, p testPane, want string) {
	t.Helper()
	var got []byte
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		got, _ = os.ReadFile(p.out)
		if len(got) >= len(want) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if string(got) != want {
		t.Fatalf("pane %s received %q, want %q", p.id, got, want)
	}
}

func TestTmuxDeliversTextLiterally(t *testing.T) {
	s := newServer(t)
	s.cat("keep") // keeps the server running while raw panes finish
	texts := []string{
		"echo \"a;b\" $HOME `id` 'q' \\ && x=1; y=2 | grep -v ~ # %s {};",
		";",
		"-t %0 Enter -- -l",
		`"double" 'single' \"escaped\"`,
		"$PATH ${HOME} $(id) $$",
		"`uname -a` ``",
		"first line\nsecond line;",
		"Enter C-c Escape",
		"grüße\t→ done",
	}
	for i, text := range texts {
		// Raw mode: every byte arrives unchanged, Enter stays "\r".
		p := s.start(fmt.Sprintf("raw%d", i), fmt.Sprintf("stty raw echo -echoctl; head -c %d > $OUT", len(text)+1))
		d, err := New(NewTmux()).Deliver(context.Background(), Target{Agent: "claude", PID: p.pid}, text)
		if err != nil {
			t.Fatalf("Deliver(%q): %v", text, err)
		}
		if d.Backend != "tmux" || d.Where != s.socket+" "+p.id {
			t.Errorf("Deliver(%q) = %+v, want tmux at %s %s", text, d, s.socket, p.id)
		}
		received(t, p, text+"\r")
	}
	if out := s.tmux("list-buffers", "-F", "#{buffer_name}"); strings.Contains(out, "nudge-") {
		t.Errorf("buffers left behind: %q", out)
	}
}

func TestTmuxLocateByRegistryPane(t *testing.T) {
	s := newServer(t)
	agent := s.cat("agent")
	other := s.cat("other")
	tm := NewTmux()
	ctx := context.Background()

	for _, registry := range []string{agent.id, "agent:@0." + agent.id} {
		w, err := tm.Locate(ctx, Target{PID: agent.pid, TmuxPane: registry})
		if err != nil {
			t.Fatalf("Locate(pane %q): %v", registry, err)
		}
		if w.Pane != agent.id || w.Server != s.socket || w.PID != agent.pid || w.PanePID != agent.pid || w.Started == "" {
			t.Errorf("Locate(pane %q) = %+v", registry, w)
		}
	}

	_, err := tm.Locate(ctx, Target{PID: agent.pid, TmuxPane: other.id})
	if !errors.Is(err, ErrOtherProcess) || !strings.Contains(err.Error(), "pane "+other.id+" now belongs to another process") {
		t.Errorf("Locate(other's pane) = %v, want %v", err, ErrOtherProcess)
	}
	_, err = tm.Locate(ctx, Target{PID: agent.pid, TmuxPane: "%999"})
	if !errors.Is(err, ErrGone) {
		t.Errorf("Locate(missing pane) = %v, want %v", err, ErrGone)
	}
	_, err = tm.Locate(ctx, Target{PID: agent.pid, TmuxPane: "agent:@0"})
	if err == nil {
		t.Error("Locate(registry value without pane) succeeded")
	}
}

func TestTmuxLocateDescendantByTerminal(t *testing.T) {
	s := newServer(t)
	s.cat("first")
	// The shell stays the pane's process; the "agent" is its child.
	p := s.start("agent", "stty echo; cat > $OUT; true")
	s.cat("last")
	child := childOf(t, p.pid, "cat")

	w, err := NewTmux().Locate(context.Background(), Target{PID: child})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	if w.Pane != p.id || w.PID != child || w.PanePID != p.pid {
		t.Errorf("Locate = %+v, want pane %s pane pid %d agent %d", w, p.id, p.pid, child)
	}
	if err := NewTmux().Send(context.Background(), w, "to the child"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	received(t, p, "to the child\n")
}

// childOf waits for the child of pid running the program name (a shell's
// short-lived children, such as stty before the agent, do not count).
func childOf(t *testing.T, pid int, name string) int {
	t.Helper()
	var child int
	waitFor(t, fmt.Sprintf("a %s child of %d", name, pid), func() bool {
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, f := range stats {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			s := string(data)
			open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
			if open < 0 || end < open || s[open+1:end] != name {
				continue
			}
			if fields := strings.Fields(s[end+1:]); len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
				child, _ = strconv.Atoi(filepath.Base(filepath.Dir(f)))
				return true
			}
		}
		return false
	})
	return child
}

func TestTmuxRefusesProcessOutsideTmux(t *testing.T) {
	s := newServer(t)
	s.cat("agent")
	ctx := context.Background()

	// No TMUX in its environment at all.
	plain := exec.Command("sleep", "60")
	plain.Env = withoutTmux(os.Environ())
	startProcess(t, plain)
	_, err := NewTmux().Locate(ctx, Target{PID: plain.Process.Pid})
	if !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), "is not in tmux") {
		t.Errorf("Locate(no TMUX) = %v", err)
	}
	d, err := New(NewTmux()).Deliver(ctx, Target{PID: plain.Process.Pid}, "continue")
	want := fmt.Sprintf("no terminal found for pid %d", plain.Process.Pid)
	if !errors.Is(err, ErrNoTerminal) || !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), want) {
		t.Errorf("Deliver(no TMUX) = %v, want %q", err, want)
	}
	if d != (Delivery{}) {
		t.Errorf("Deliver(no TMUX) located %+v", d)
	}

	// TMUX names the server, but the process's terminal is no pane of it.
	spoof := exec.Command("sleep", "60")
	spoof.Env = append(withoutTmux(os.Environ()), "TMUX="+s.socket+",1,0")
	tty, err := pty.Start(spoof)
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	t.Cleanup(func() { _ = spoof.Process.Kill(); _ = spoof.Wait(); _ = tty.Close() })
	waitFor(t, "sleep to start", func() bool {
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", spoof.Process.Pid))
		return strings.Contains(string(env), "TMUX=")
	})
	_, err = NewTmux().Locate(ctx, Target{PID: spoof.Process.Pid})
	if !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), "no pane of tmux server") {
		t.Errorf("Locate(foreign terminal) = %v", err)
	}

	if _, err := NewTmux().Locate(ctx, Target{}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("Locate(no pid) = %v", err)
	}
}

func startProcess(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

func TestTmuxRefusesProcessThePaneDoesNotHold(t *testing.T) {
	s := newServer(t)
	testenv.Need(t, "script")
	// From the pane: an orphan still on the pane's terminal but no longer
	// under the pane's process, and a child on a terminal of its own.
	p := s.start("agent", "stty echo; (sleep 100 & echo $! > $OUT.orphan); "+
		"script -qc 'echo $$ > $OUT.nested; exec sleep 101' /dev/null > /dev/null & cat > $OUT")
	ctx := context.Background()
	for _, name := range []string{"orphan", "nested"} {
		pid := pidFrom(t, p.out+"."+name)
		t.Cleanup(func() { _ = killPid(pid) })
		execedInto(pid, "sleep")
		if _, err := NewTmux().Locate(ctx, Target{PID: pid}); !errors.Is(err, ErrNotInTerminal) {
			t.Errorf("Locate(%s pid %d) = %v, want %v", name, pid, err, ErrNotInTerminal)
		}
		if _, err := NewTmux().Locate(ctx, Target{PID: pid, TmuxPane: p.id}); !errors.Is(err, ErrOtherProcess) {
			t.Errorf("Locate(%s pid %d, pane %s) = %v, want %v", name, pid, p.id, err, ErrOtherProcess)
		}
	}
}

// pidFrom waits for a pid to be written to file.
func pidFrom(t *testing.T, file string) int {
	t.Helper()
	var pid int
	waitFor(t, "a pid in "+file, func() bool {
		data, _ := os.ReadFile(file)
		var err error
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	})
	return pid
}

func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func TestTmuxRefusesGonePane(t *testing.T) {
	s := newServer(t)
	s.cat("keep") // keeps the server running after the pane is gone
	p := s.cat("agent")
	tm := NewTmux()
	ctx := context.Background()
	w, err := tm.Locate(ctx, Target{PID: p.pid})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	s.tmux("kill-pane", "-t", p.id)
	err = tm.Send(ctx, w, "continue")
	if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "pane "+p.id+" is gone") {
		t.Errorf("Send(killed pane) = %v", err)
	}

	s.tmux("kill-server")
	waitFor(t, "the server to stop", func() bool { return !serverRunning(s.socket) })
	if err := tm.Send(ctx, w, "continue"); !errors.Is(err, ErrGone) {
		t.Errorf("Send(stopped server) = %v", err)
	}
}

func TestTmuxRefusesRespawnedPane(t *testing.T) {
	s := newServer(t)
	p := s.cat("agent")
	tm := NewTmux()
	ctx := context.Background()
	w, err := tm.Locate(ctx, Target{PID: p.pid, TmuxPane: p.id})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	s.tmux("respawn-pane", "-k", "-t", p.id, "stty echo; cat > '"+p.out+".new'")
	err = tm.Send(ctx, w, "continue")
	if !errors.Is(err, ErrOtherProcess) || !strings.Contains(err.Error(), "pane "+p.id+" now belongs to another process") {
		t.Errorf("Send(respawned pane) = %v", err)
	}
}

func TestTmuxRefusesReusedPid(t *testing.T) {
	s := newServer(t)
	p := s.cat("agent")
	tm := NewTmux()
	ctx := context.Background()
	w, err := tm.Locate(ctx, Target{PID: p.pid})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	// The same pid with another start time is another process.
	w.Started += "1"
	if err := tm.Send(ctx, w, "continue"); !errors.Is(err, ErrOtherProcess) {
		t.Errorf("Send(other start time) = %v", err)
	}
	w.Started = w.Started[:len(w.Started)-1]
	if err := tm.Send(ctx, w, "after"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	// Only the verified send arrived.
	received(t, p, "after\n")
}

func TestTmuxRefusesCopyMode(t *testing.T) {
	s := newServer(t)
	p := s.cat("agent")
	inj := New(NewTmux())
	ctx := context.Background()
	target := Target{PID: p.pid, TmuxPane: p.id}

	s.tmux("copy-mode", "-t", p.id)
	_, err := inj.Deliver(ctx, target, "refused")
	if !errors.Is(err, ErrCopyMode) || !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), p.id+" is in copy mode") {
		t.Fatalf("Deliver(copy mode) = %v, want it held for copy mode", err)
	}
	s.tmux("send-keys", "-t", p.id, "-X", "cancel")
	waitFor(t, "copy mode to end", func() bool {
		return s.tmux("display-message", "-p", "-t", p.id, "#{pane_in_mode}") == "0"
	})
	if _, err := inj.Deliver(ctx, target, "after"); err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	received(t, p, "after\n")
}

func TestDeliverChecksIdleBeforeTyping(t *testing.T) {
	s := newServer(t)
	p := s.cat("agent")
	inj := New(NewTmux())
	ctx := context.Background()

	busy := errors.New("registry says busy")
	calls := 0
	target := Target{PID: p.pid, Idle: func(context.Context) error { calls++; return busy }}
	d, err := inj.Deliver(ctx, target, "refused")
	if !errors.Is(err, ErrNotIdle) || !errors.Is(err, busy) {
		t.Fatalf("Deliver(not idle) = %v", err)
	}
	if calls != 1 || d.Backend != "tmux" || d.Where != s.socket+" "+p.id {
		t.Errorf("Deliver(not idle): %d checks, delivery %+v", calls, d)
	}

	target.Idle = func(context.Context) error { calls++; return nil }
	if _, err := inj.Deliver(ctx, target, "after"); err != nil {
		t.Fatalf("Deliver(idle): %v", err)
	}
	if calls != 2 {
		t.Errorf("Idle called %d times, want 2", calls)
	}
	received(t, p, "after\n")
}

func TestTmuxRefusesEmptyText(t *testing.T) {
	s := newServer(t)
	p := s.cat("agent")
	w, err := NewTmux().Locate(context.Background(), Target{PID: p.pid})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	if err := NewTmux().Send(context.Background(), w, ""); err == nil {
		t.Error("Send(\"\") succeeded")
	}
}

// slowReader is an application that reads its input only a moment after
// it came, then draws what it read: what one read returned goes to $OUT,
// the next byte to $OUT.enter. Typed text and an Enter pressed at once
// would reach it in one read, where Claude Code takes the Enter as part of
// a paste.
const slowReader = "stty raw -echo -echoctl; sleep 1; dd bs=65536 count=1 of=$OUT 2>/dev/null; cat $OUT; dd bs=1 count=1 of=$OUT.enter 2>/dev/null"

// readApart checks that a slowReader at out read text, then Enter alone.
func readApart(t *testing.T, out, text string) {
	t.Helper()
	received(t, testPane{out: out + ".enter"}, "\r")
	if got, _ := os.ReadFile(out); string(got) != text {
		t.Errorf("the application read %q first, want the text alone: %q", got, text)
	}
}

func TestTmuxPressesEnterOnceTheTextShows(t *testing.T) {
	s := newServer(t)
	p := s.start("agent", slowReader)
	text := "Your previous attempt failed; please continue where you left off."
	if _, err := New(NewTmux()).Deliver(context.Background(), Target{Agent: "claude", PID: p.pid}, text); err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	readApart(t, p.out, text)
}

// An application that never draws the text still gets the Enter, once
// echo.Wait is over, and the text only once.
func TestTmuxPressesEnterWhenTheTextNeverShows(t *testing.T) {
	testenv.Slow(t)
	s := newServer(t)
	text := "continue"
	p := s.start("agent", fmt.Sprintf("stty raw -echo; head -c %d > $OUT", len(text)+1))
	if _, err := New(NewTmux()).Deliver(context.Background(), Target{Agent: "claude", PID: p.pid}, text); err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	received(t, p, text+"\r")
}
