//go:build linux

package proc

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"nudge/internal/testenv"
)

// start runs a long sleep as configured by setup and stops it with the test.
func start(t *testing.T, setup func(*exec.Cmd)) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(testenv.Need(t, "sleep"), "300")
	if setup != nil {
		setup(cmd)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// otherUser returns a user id that is not nudge's: nobody when running as
// root (then processes can be started as it), else root.
func otherUser() uint32 {
	if self == 0 {
		return 65534
	}
	return 0
}

func TestListAndGetOwnProcesses(t *testing.T) {
	dir := t.TempDir()
	child := start(t, func(c *exec.Cmd) { c.Dir, c.Env = dir, []string{"NUDGE_PROC_TEST=yes", "OTHER=x"} })
	all, err := List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(p Process) bool { return p.PID == child.Process.Pid })
	if i < 0 {
		t.Fatalf("List lacks the test's own child %d", child.Process.Pid)
	}
	p := all[i]
	if p.PPID != os.Getpid() || p.Name != "sleep" || !slices.Equal(p.Args, []string{child.Path, "300"}) || p.Started == "" {
		t.Errorf("child as listed: %+v", p)
	}
	got, err := Get(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if got.PID != p.PID || got.PPID != p.PPID || got.Started != p.Started || got.Args != nil {
		t.Errorf("Get = %+v, List said %+v", got, p)
	}
	env, err := Env(child.Process.Pid)
	if v, ok := Lookup(env, "NUDGE_PROC_TEST"); err != nil || !ok || v != "yes" {
		t.Errorf("Env = %q, %v", env, err)
	}
	if cwd, err := Cwd(context.Background(), child.Process.Pid); err != nil || cwd != dir {
		t.Errorf("Cwd = %q, %v; want %s", cwd, err, dir)
	}
	if args, err := Args(child.Process.Pid); err != nil || !slices.Equal(args, p.Args) {
		t.Errorf("Args = %q, %v", args, err)
	}
}

func TestGoneProcesses(t *testing.T) {
	child := start(t, nil)
	before, err := Get(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	child.Process.Kill()
	// Not reaped yet: a zombie, which holds nothing.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := Get(child.Process.Pid)
		if errors.Is(err, ErrGone) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a killed, unreaped child: Get = %v, want ErrGone", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	child.Wait()
	if _, err := Get(child.Process.Pid); !errors.Is(err, ErrGone) {
		t.Errorf("a reaped child: Get = %v, want ErrGone", err)
	}
	if _, err := Env(before.PID); !errors.Is(err, ErrGone) {
		t.Errorf("a reaped child: Env = %v, want ErrGone", err)
	}
	if _, err := Get(0); !errors.Is(err, ErrGone) {
		t.Errorf("Get(0) = %v, want ErrGone", err)
	}
}

// othersProcess is a process of another user: nobody's sleep when the test
// runs as root, else pid 1 when root owns it.
func othersProcess(t *testing.T) int {
	t.Helper()
	if self == 0 {
		u := otherUser()
		return start(t, func(c *exec.Cmd) {
			c.Dir = "/"
			c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u, Gid: u}}
		}).Process.Pid
	}
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/1", &st); err != nil || st.Uid == self {
		t.Skip("no process of another user to look at (not root, and pid 1 is this user's)")
	}
	return 1
}

func TestOtherUsersProcessesAreNeverRead(t *testing.T) {
	pid := othersProcess(t)
	all, err := List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(all, func(p Process) bool { return p.PID == pid }) {
		t.Errorf("List includes pid %d of another user", pid)
	}
	checks := map[string]func() error{
		"Get":       func() error { _, err := Get(pid); return err },
		"Args":      func() error { _, err := Args(pid); return err },
		"Env":       func() error { _, err := Env(pid); return err },
		"Cwd":       func() error { _, err := Cwd(context.Background(), pid); return err },
		"HoldsOpen": func() error { _, err := HoldsOpen(context.Background(), pid, "/"); return err },
		"Listening": func() error { _, err := Listening(pid); return err },
	}
	for name, f := range checks {
		if err := f(); !errors.Is(err, ErrNotMine) {
			t.Errorf("%s of another user's process: %v, want ErrNotMine", name, err)
		}
	}
}

// A process whose effective uid is nudge's but whose real uid is another
// user's (a set-user-id program that user ran) is not the person's.
func TestRealUIDMustMatchToo(t *testing.T) {
	if self != 0 {
		t.Skip("needs root to start a process with a real uid other than its effective one")
	}
	setpriv := testenv.Need(t, "setpriv")
	cmd := exec.Command(setpriv, "--ruid", strconv.Itoa(int(otherUser())), "--", testenv.Need(t, "sleep"), "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	// Wait for setpriv to have become the sleep.
	waitUntil(t, "setpriv to exec sleep", func() bool {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		return string(b) == "sleep\n"
	})
	if _, err := Get(pid); !errors.Is(err, ErrNotMine) {
		t.Errorf("real uid %d, effective uid %d: Get = %v, want ErrNotMine", otherUser(), self, err)
	}
	all, err := List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(all, func(p Process) bool { return p.PID == pid }) {
		t.Errorf("List includes pid %d whose real uid is another user's", pid)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHoldsOpen(t *testing.T) {
	dir := t.TempDir()
	held, other := filepath.Join(dir, "held"), filepath.Join(dir, "other")
	for _, p := range []string{held, other} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := HoldsOpen(context.Background(), os.Getpid(), held); err != nil || !ok {
		t.Errorf("HoldsOpen(open file) = %v, %v", ok, err)
	}
	if ok, err := HoldsOpen(context.Background(), os.Getpid(), other); err != nil || ok {
		t.Errorf("HoldsOpen(closed file) = %v, %v", ok, err)
	}
}

func TestListening(t *testing.T) {
	var want []netip.AddrPort
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v", addr, err)
			continue
		}
		defer ln.Close()
		want = append(want, ln.Addr().(*net.TCPAddr).AddrPort())
	}
	if len(want) == 0 {
		t.Fatal("cannot listen on loopback")
	}
	got, err := Listening(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("Listening = %v, lacks %v", got, w)
		}
	}
	child := start(t, nil)
	if got, err := Listening(child.Process.Pid); err != nil || len(got) != 0 {
		t.Errorf("a process without sockets: Listening = %v, %v", got, err)
	}
}
