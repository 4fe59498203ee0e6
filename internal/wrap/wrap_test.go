//go:build linux

package wrap_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/internal/inject"
	"nudge/internal/testenv"
	"nudge/internal/wrap"
)

// envNudgeBin names a prebuilt nudge binary (the e2e tests' variable);
// unset, TestMain builds one.
const envNudgeBin = "NUDGE_E2E_NUDGE_BIN"

// envDial makes the test binary a client that asks the wrapper on that
// socket who it is (run as another user by TestOtherUserIsRefused).
const envDial = "NUDGE_WRAP_TEST_DIAL"

// deadline bounds every wait for an effect.
const deadline = 10 * time.Second

var nudgeBin string

func TestMain(m *testing.M) {
	if sock := os.Getenv(envDial); sock != "" {
		info, err := wrap.NewClient(sock).Who(context.Background())
		if err != nil {
			fmt.Println("refused:", err)
			os.Exit(1)
		}
		fmt.Println("answered: wrapper", info.PID)
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	nudgeBin = os.Getenv(envNudgeBin)
	if nudgeBin == "" {
		dir, err := os.MkdirTemp("", "nudge-wrap-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		nudgeBin = filepath.Join(dir, "nudge")
		if out, err := exec.Command("go", "build", "-o", nudgeBin, "nudge/cmd/nudge").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build nudge/cmd/nudge: %v\n%s", err, out)
			return 1
		}
	}
	return m.Run()
}

// place is a test's folder: scripts, files the child writes, and the data
// folder (kept short: a socket path must fit in 108 bytes).
type place struct {
	t    *testing.T
	dir  string
	data string
}

func newPlace(t *testing.T) *place {
	t.Helper()
	dir, err := os.MkdirTemp("", "nw-")
	if err != nil {
		t.Fatal(err)
	}
	p := &place{t: t, dir: dir, data: filepath.Join(dir, "data")}
	t.Cleanup(func() {
		p.killWrappers()
		os.RemoveAll(dir)
	})
	return p
}

// killWrappers ends the wrappers a failed test left running; the closing
// terminal then hangs up their commands.
func (p *place) killWrappers() {
	socks, _ := wrap.Sockets(p.data)
	for _, s := range socks {
		pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(s), ".sock"))
		if err != nil {
			continue
		}
		// Only a wrapper of this test: the pid may have been reused.
		if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); bytes.HasPrefix(cmdline, []byte(nudgeBin+"\x00wrap\x00")) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// path is name inside the place.
func (p *place) path(name string) string { return filepath.Join(p.dir, name) }

// script writes an sh script in which $D is the place's folder.
func (p *place) script(name, body string) string {
	p.t.Helper()
	path := p.path(name)
	if err := os.WriteFile(path, []byte("D='"+p.dir+"'\n"+body+"\n"), 0o755); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// read returns the file's content, "" while it does not exist.
func (p *place) read(name string) string {
	data, _ := os.ReadFile(p.path(name))
	return string(data)
}

// waitFile waits until the file name holds want.
func (p *place) waitFile(name, want string) {
	p.t.Helper()
	waitFor(p.t, fmt.Sprintf("%s to hold %q", name, want), func() bool { return p.read(name) == want })
	if got := p.read(name); got != want {
		p.t.Fatalf("%s = %q, want %q", name, got, want)
	}
}

// socket waits for the only wrapper's socket in the data folder.
func (p *place) socket() string {
	p.t.Helper()
	var socks []string
	waitFor(p.t, "the wrapper's socket", func() bool {
		socks, _ = wrap.Sockets(p.data)
		return len(socks) == 1
	})
	return socks[0]
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !ok() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tmuxPane runs `nudge wrap -- sh CHILD` in a fresh tmux pane (200x50),
// recording the outer terminal's mode before and after and the wrapper's
// exit status in the files "before", "after" and "rc".
func (p *place) tmuxPane(child string) (tmux func(args ...string) string) {
	p.t.Helper()
	testenv.Need(p.t, "tmux")
	socket := p.path("tmux")
	tmux = func(args ...string) string {
		p.t.Helper()
		cmd := exec.Command("tmux", append([]string{"-S", socket, "-f", "/dev/null"}, args...)...)
		cmd.Env = append(withoutTmux(os.Environ()), "NUDGE_DATA_DIR="+p.data)
		out, err := cmd.CombinedOutput()
		if err != nil {
			p.t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	outer := p.script("outer.sh", fmt.Sprintf(`stty -g > "$D/before"
'%s' wrap -- sh '%s'
echo "rc=$?" > "$D/rc"
stty -g > "$D/after"
exec sleep 600`, nudgeBin, child))
	tmux("new-session", "-d", "-s", "t", "-x", "200", "-y", "50", "sh "+outer)
	p.t.Cleanup(func() { _ = exec.Command("tmux", "-S", socket, "kill-server").Run() })
	return tmux
}

func withoutTmux(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestTerminalPassesThrough: in a real terminal, output and window size
// reach the child and back, the exit status is the child's, the person's
// terminal mode is restored, and the socket is user-only while it lives
// and gone after.
func TestTerminalPassesThrough(t *testing.T) {
	p := newPlace(t)
	child := p.script("child.sh", `echo "hello from $(tty)"
printf 'colour: \033[31mred\033[0m\n'
while [ ! -e "$D/go" ]; do stty size > "$D/size.tmp"; mv "$D/size.tmp" "$D/size"; sleep 0.05; done
exit 7`)
	tmux := p.tmuxPane(child)

	sock := p.socket()
	p.waitFile("size", "50 200\n")
	waitFor(t, "the child's output on the terminal", func() bool {
		screen := tmux("capture-pane", "-p", "-e", "-t", "t")
		return strings.Contains(screen, "hello from /dev/pts/") && strings.Contains(screen, "colour: \x1b[31mred")
	})
	checkMode(t, wrap.Dir(p.data), 0o700)
	checkMode(t, sock, 0o600)
	if before, raw := p.read("before"), outerMode(t, tmux); raw == before {
		t.Errorf("the outer terminal was not put in raw mode (%s)", raw)
	}

	tmux("resize-window", "-t", "t", "-x", "120", "-y", "40")
	p.waitFile("size", "40 120\n")

	if err := os.WriteFile(p.path("go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.waitFile("rc", "rc=7\n")
	waitFor(t, "the outer mode after", func() bool { return p.read("after") != "" })
	if before, after := p.read("before"), p.read("after"); before != after {
		t.Errorf("terminal mode not restored: before %q, after %q", before, after)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket %s left behind: %v", sock, err)
	}
}

// outerMode reads the pane's terminal mode (stty -g) from outside.
func outerMode(t *testing.T, tmux func(...string) string) string {
	t.Helper()
	tty := strings.TrimSpace(tmux("display-message", "-p", "-t", "t", "#{pane_tty}"))
	f, err := os.Open(tty)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("stty", "-g")
	cmd.Stdin = f
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("stty -g on %s: %v", tty, err)
	}
	return string(out)
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}

// hostile is a continuation full of what a shell or tmux would interpret.
const hostile = "don't \"stop\"; echo $HOME `id` $(id) \\ && x=1 | y # %s {} ~\nsecond line;"

// TestTypedContinuationArrivesLiterally: the wrap backend finds the wrapper
// of an agent process below the wrapped command and types the text byte for
// byte, then Enter; bracketed when the agent switched bracketed paste on.
func TestTypedContinuationArrivesLiterally(t *testing.T) {
	for _, tc := range []struct {
		name, setup, want string
	}{
		{"plain", "", hostile + "\r"},
		{"bracketed paste", `printf '\033[?2004h'`, "\x1b[200~" + hostile + "\x1b[201~\r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlace(t)
			p.script("agent.sh", fmt.Sprintf(`%s
stty raw echo -echoctl
echo $$ > "$D/pid.tmp"; mv "$D/pid.tmp" "$D/pid"
exec head -c %d > "$D/out"`, tc.setup, len(tc.want)))
			child := p.script("child.sh", `sh "$D/agent.sh"; exit 0`)
			p.tmuxPane(child)
			p.socket()
			waitFor(t, "the agent's pid", func() bool { return p.read("pid") != "" })
			pid, err := strconv.Atoi(strings.TrimSpace(p.read("pid")))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			backend := inject.NewWrap(p.data)
			var where inject.Where
			waitFor(t, "the wrapper to see the agent's terminal mode", func() bool {
				where, err = backend.Locate(ctx, inject.Target{PID: pid})
				if err != nil {
					t.Fatalf("Locate(pid %d): %v", pid, err)
				}
				info, err := wrap.NewClient(where.Server).Who(ctx)
				return err == nil && info.BracketedPaste == (tc.setup != "")
			})
			if where.PID != pid || !strings.HasPrefix(where.Pane, "/dev/pts/") {
				t.Errorf("Locate = %+v", where)
			}
			if err := backend.Send(ctx, where, hostile); err != nil {
				t.Fatalf("Send: %v", err)
			}
			p.waitFile("rc", "rc=0\n")
			if got := p.read("out"); got != tc.want {
				t.Errorf("the agent received %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTermReachesTheChild: SIGTERM to the wrapper reaches the child, whose
// own exit status the wrapper then returns.
func TestTermReachesTheChild(t *testing.T) {
	p := newPlace(t)
	child := p.script("child.sh", `trap 'echo got TERM > "$D/term"; exit 3' TERM
: > "$D/ready"
while :; do sleep 0.05; done`)
	p.tmuxPane(child)
	sock := p.socket()
	waitFor(t, "the child", func() bool { _, err := os.Stat(p.path("ready")); return err == nil })
	pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(sock), ".sock"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waitFile("term", "got TERM\n")
	p.waitFile("rc", "rc=3\n")
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket %s left behind: %v", sock, err)
	}
}

// TestWithoutTerminal: with pipes instead of a terminal, input and output
// pass through, the exit status is the child's, and a signal that kills
// the child gives 128+signal.
func TestWithoutTerminal(t *testing.T) {
	p := newPlace(t)
	cmd := exec.Command(nudgeBin, "wrap", "--", "sh", "-c", `echo "out-$((6*7))"; stty size; read line; echo "got:$line"; exit 5`)
	cmd.Env = append(os.Environ(), "NUDGE_DATA_DIR="+p.data)
	cmd.Stdin = strings.NewReader("abc\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 5 {
		t.Fatalf("exit: %v, want status 5; stderr: %s", err, errOut.String())
	}
	text := strings.ReplaceAll(out.String(), "\r\n", "\n")
	for _, want := range []string{"out-42\n", "24 80\n", "got:abc\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("output %q lacks %q", text, want)
		}
	}

	cmd = exec.Command(nudgeBin, "wrap", "--", "sh", "-c", `echo ready; exec sleep 600`)
	cmd.Env = append(os.Environ(), "NUDGE_DATA_DIR="+p.data)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	ready := make([]byte, len("ready"))
	if _, err := io.ReadFull(stdout, ready); err != nil || string(ready) != "ready" {
		t.Fatalf("read %q: %v", ready, err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	go io.Copy(io.Discard, stdout)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(deadline):
		t.Fatal("the wrapper did not end after SIGTERM")
	}
	if !errors.As(err, &exit) || exit.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("exit after SIGTERM: %v, want status %d", err, 128+int(syscall.SIGTERM))
	}
}

func TestBadUsage(t *testing.T) {
	for _, argv := range [][]string{{"wrap"}, {"wrap", "--"}} {
		err := exec.Command(nudgeBin, argv...).Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("nudge %v: %v, want status 2", argv, err)
		}
	}
}

// TestOtherUserIsRefused: another user can neither enter the socket's
// folder nor, when the folder and socket are opened up, get an answer: the
// wrapper checks the peer's uid.
func TestOtherUserIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user; the folder's mode 0700 is checked by TestTerminalPassesThrough")
	}
	p := newPlace(t)
	if err := os.Chmod(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nudgeBin, "wrap", "--", "sh", "-c", `exec sleep 600`)
	cmd.Env = append(os.Environ(), "NUDGE_DATA_DIR="+p.data)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sock := p.socket()
	if _, err := wrap.NewClient(sock).Who(context.Background()); err != nil {
		t.Fatalf("the owner got no answer: %v", err)
	}

	// This test binary, copied where the other user can run it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := p.path("dial")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func() string {
		c := exec.Command(bin)
		c.Env = []string{envDial + "=" + sock}
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := c.CombinedOutput()
		if err == nil {
			t.Errorf("another user got an answer: %s", out)
		}
		return string(out)
	}
	if out := asNobody(); !strings.Contains(out, "permission denied") {
		t.Errorf("through the closed folder: %s", out)
	}
	for _, open := range []struct {
		path string
		mode os.FileMode
	}{{p.data, 0o755}, {wrap.Dir(p.data), 0o755}, {sock, 0o666}} {
		if err := os.Chmod(open.path, open.mode); err != nil {
			t.Fatal(err)
		}
	}
	if out := asNobody(); !strings.Contains(out, "refused") || strings.Contains(out, "permission denied") {
		t.Errorf("through the opened socket: %s", out)
	}
	if _, err := wrap.NewClient(sock).Who(context.Background()); err != nil {
		t.Errorf("the owner got no answer after refusing another user: %v", err)
	}
}

// TestPersonAtTheKeyboardHoldsTyping: what the person types through the
// wrapper holds nudge's typing until they sent it and PresentFor passed;
// nothing of nudge's lands in their draft.
func TestPersonAtTheKeyboardHoldsTyping(t *testing.T) {
	p := newPlace(t)
	want := "my draft\r" + hostile + "\r"
	p.script("agent.sh", fmt.Sprintf(`stty raw -echo
echo $$ > "$D/pid.tmp"; mv "$D/pid.tmp" "$D/pid"
exec head -c %d > "$D/out"`, len(want)))
	child := p.script("child.sh", `sh "$D/agent.sh"; exit 0`)
	tmux := p.tmuxPane(child)
	p.socket()
	waitFor(t, "the agent's pid", func() bool { return p.read("pid") != "" })
	pid, err := strconv.Atoi(strings.TrimSpace(p.read("pid")))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	backend := inject.NewWrap(p.data)
	where, err := backend.Locate(ctx, inject.Target{PID: pid})
	if err != nil {
		t.Fatal(err)
	}
	attended := func() inject.Attention {
		a, err := backend.Attended(ctx, where)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	tmux("send-keys", "-t", "t", "-l", "my draft")
	waitFor(t, "the draft seen by the wrapper", func() bool { return attended().Unsent })
	if err := backend.Send(ctx, where, hostile); !errors.Is(err, inject.ErrPresent) {
		t.Fatalf("Send over an unsent draft: %v, want ErrPresent", err)
	}
	tmux("send-keys", "-t", "t", "Enter")
	waitFor(t, "the draft sent", func() bool { return !attended().Unsent })
	if err := backend.Send(ctx, where, hostile); !errors.Is(err, inject.ErrPresent) {
		t.Fatalf("Send right after a key: %v, want ErrPresent", err)
	}
	last := attended().LastKey
	time.Sleep(time.Until(last.Add(inject.PresentFor + 100*time.Millisecond)))
	if err := backend.Send(ctx, where, hostile); err != nil {
		t.Fatalf("Send once the person is done: %v", err)
	}
	p.waitFile("rc", "rc=0\n")
	if got := p.read("out"); got != want {
		t.Errorf("the agent received %q, want %q", got, want)
	}
}
