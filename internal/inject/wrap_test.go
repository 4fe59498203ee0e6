//go:build linux

package inject

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"nudge/internal/wrap"
)

// envWrapper makes this test binary a `nudge wrap` of the command after
// "--" (TestWrapperProcess), so the backend talks to a real wrapper.
const envWrapper = "NUDGE_INJECT_TEST_WRAPPER"

// TestWrapperProcess is not a test: it is the wrapper process the wrap
// tests start.
func TestWrapperProcess(t *testing.T) {
	dataDir := os.Getenv(envWrapper)
	if dataDir == "" {
		t.Skip("the wrapper process of the wrap tests")
	}
	i := slices.Index(os.Args, "--")
	code, err := wrap.Run(wrap.Options{
		Command: os.Args[i+1:], DataDir: dataDir,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

// wrapper is a running wrapper process of a test.
type wrapper struct {
	dir    string // the test's folder: $D in the script
	data   string // the data folder
	socket string
	cmd    *exec.Cmd
	done   chan error
}

// startWrapper runs the sh script (with $D exported, naming a test folder) under a
// wrapper and waits for its socket.
func startWrapper(t *testing.T, script string) *wrapper {
	t.Helper()
	dir, err := os.MkdirTemp("", "nw-") // short: socket paths must fit in 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	w := &wrapper{dir: dir, data: filepath.Join(dir, "data"), done: make(chan error, 1)}
	w.cmd = exec.Command(os.Args[0], "-test.run=^TestWrapperProcess$", "--", "sh", "-c", "export D='"+dir+"'\n"+script)
	w.cmd.Env = append(os.Environ(), envWrapper+"="+w.data)
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.done <- w.cmd.Wait() }()
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		<-w.done
	})
	w.socket = wrap.SocketPath(w.data, w.cmd.Process.Pid)
	waitFor(t, "the wrapper's socket", func() bool { _, err := os.Stat(w.socket); return err == nil })
	return w
}

// pid waits for the file name in the test folder and reads a pid from it.
func (w *wrapper) pid(t *testing.T, name string) int {
	t.Helper()
	var pid int
	waitFor(t, name, func() bool {
		data, _ := os.ReadFile(filepath.Join(w.dir, name))
		var err error
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	})
	return pid
}

// agentScript is an agent that writes its pid to "pid" and then exactly
// the n bytes it receives, in raw mode, to "out".
func agentScript(n int) string {
	return fmt.Sprintf(`stty raw echo -echoctl; echo $$ > "$D/pid.tmp"; mv "$D/pid.tmp" "$D/pid"; exec head -c %d > "$D/out"`, n)
}

func TestWrapTypesIntoTheWrappedAgent(t *testing.T) {
	text := "a'b\"c $HOME `id`; d\nnext;"
	w := startWrapper(t, agentScript(len(text)+1))
	pid := w.pid(t, "pid")
	b := NewWrap(w.data)
	ctx := context.Background()
	where, err := b.Locate(ctx, Target{PID: pid})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	if where.Server != w.socket || where.PID != pid || where.PanePID != pid || !strings.HasPrefix(where.Pane, "/dev/pts/") {
		t.Errorf("Locate = %+v", where)
	}
	if err := b.Send(ctx, where, text); err != nil {
		t.Fatalf("Send: %v", err)
	}
	out := filepath.Join(w.dir, "out")
	waitFor(t, "the agent's input", func() bool { fi, err := os.Stat(out); return err == nil && fi.Size() == int64(len(text)+1) })
	if got, _ := os.ReadFile(out); string(got) != text+"\r" {
		t.Errorf("the agent received %q, want %q", got, text+"\r")
	}
	waitFor(t, "the socket to go", func() bool { _, err := os.Stat(w.socket); return errors.Is(err, os.ErrNotExist) })
	if err := b.Send(ctx, where, text); !errors.Is(err, ErrGone) {
		t.Errorf("Send to an ended wrapper: %v, want ErrGone", err)
	}
	if _, err := b.Locate(ctx, Target{PID: pid}); err == nil {
		t.Error("Locate found an ended agent")
	}
}

// TestWrapFindsAgentsBelowOrBesideTheCommand: the agent may be a descendant
// of the wrapped command, or only share its terminal.
func TestWrapFindsAgentsBelowOrBesideTheCommand(t *testing.T) {
	w := startWrapper(t, `sh -c 'echo $$ > "$D/below"; exec sleep 600' &
(sleep 600 & echo $! > "$D/beside")
wait`)
	below, beside := w.pid(t, "below"), w.pid(t, "beside")
	t.Cleanup(func() { _ = syscall.Kill(beside, syscall.SIGKILL) })
	execedInto(below, "sleep")
	execedInto(beside, "sleep")
	info, err := wrap.NewClient(w.socket).Who(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the subshell to leave the beside process", func() bool {
		under, err := descendsFrom(beside, info.ChildPID)
		return err == nil && !under
	})
	b := NewWrap(w.data)
	for _, pid := range []int{below, beside} {
		where, err := b.Locate(context.Background(), Target{PID: pid})
		if err != nil {
			t.Errorf("Locate(pid %d): %v", pid, err)
			continue
		}
		if where.Server != w.socket || where.PID != pid {
			t.Errorf("Locate(pid %d) = %+v", pid, where)
		}
	}
}

func TestWrapRefuses(t *testing.T) {
	w := startWrapper(t, agentScript(1))
	pid := w.pid(t, "pid")
	b := NewWrap(w.data)
	ctx := context.Background()

	if _, err := b.Locate(ctx, Target{PID: os.Getpid()}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("Locate(a process no wrapper runs): %v, want ErrNotInTerminal", err)
	}
	if _, err := b.Locate(ctx, Target{}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("Locate(no pid): %v, want ErrNotInTerminal", err)
	}
	if _, err := NewWrap(filepath.Join(w.dir, "none")).Locate(ctx, Target{PID: pid}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("Locate(no wrapper folder): %v, want ErrNotInTerminal", err)
	}

	where, err := b.Locate(ctx, Target{PID: pid})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	restarted := where
	restarted.Started += "0"
	if err := b.Send(ctx, restarted, "x"); !errors.Is(err, ErrOtherProcess) {
		t.Errorf("Send after the agent restarted: %v, want ErrOtherProcess", err)
	}
	other := where
	other.PanePID++
	if err := b.Send(ctx, other, "x"); !errors.Is(err, ErrOtherProcess) {
		t.Errorf("Send to a wrapper of another command: %v, want ErrOtherProcess", err)
	}
	if err := wrap.NewClient(w.socket).Type(ctx, pid+1, "x", 0, 0); !errors.Is(err, wrap.ErrOtherChild) {
		t.Errorf("the wrapper typed for another pid: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(w.dir, "out")); len(got) != 0 {
		t.Errorf("a refused Send typed %q", got)
	}

	if err := os.Chmod(wrap.Dir(w.data), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Locate(ctx, Target{PID: pid}); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("Locate trusted a folder open to others: %v", err)
	}
}

func TestWrapIsRegistered(t *testing.T) {
	if !slices.Contains(Names(), "wrap") {
		t.Errorf("Names() = %v, lacks wrap", Names())
	}
	if _, err := Build([]string{"wrap"}, Options{}); err != nil {
		t.Errorf("Build([wrap]): %v", err)
	}
}

func TestWrapPressesEnterOnceTheTextShows(t *testing.T) {
	// The pid is told once the terminal is raw: text typed before that
	// would be echoed by the terminal itself, as if the application drew it.
	w := startWrapper(t, `stty raw -echo -echoctl; echo $$ > "$D/pid.tmp"; mv "$D/pid.tmp" "$D/pid"; `+strings.ReplaceAll(slowReader, "$OUT", `"$D/out"`))
	pid := w.pid(t, "pid")
	b := NewWrap(w.data)
	ctx := context.Background()
	where, err := b.Locate(ctx, Target{PID: pid})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	text := "Your previous attempt failed; please continue where you left off."
	if err := b.Send(ctx, where, text); err != nil {
		t.Fatalf("Send: %v", err)
	}
	readApart(t, filepath.Join(w.dir, "out"), text)
}
