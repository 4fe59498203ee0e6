//go:build linux

package proc

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// WatchExit tells a process's end when it comes, not before; Stop ends a
// watch without telling; a process gone already is told at once.
func TestWatchExit(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p, err := Get(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	e, err := WatchExit(p)
	if err != nil {
		t.Fatal(err)
	}
	other, err := WatchExit(p)
	if err != nil {
		t.Fatal(err)
	}
	other.Stop()
	select {
	case <-e.Done:
		t.Fatal("told an end while the process runs")
	case <-time.After(200 * time.Millisecond):
	}
	cmd.Process.Kill()
	cmd.Wait()
	select {
	case <-e.Done:
	case <-time.After(5 * time.Second):
		t.Fatal("the end of the process was not told")
	}
	select {
	case <-other.Done:
		t.Error("a stopped watch told the end")
	default:
	}

	gone, err := WatchExit(p)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-gone.Done:
	default:
		t.Error("a process gone already is not told as ended")
	}

	// Another run under the same pid is not the process watched.
	self, err := Get(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self.Started += "0"
	reused, err := WatchExit(self)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-reused.Done:
	default:
		t.Error("a pid running another process is not told as the end of the one watched")
	}
}

// A process that ends after its pidfd is in the runtime's poller but
// before the wait begins is told all the same, though the poller took
// the pidfd's one readiness meanwhile.
func TestWaitReadableAfterThePollerTookTheEnd(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	fd, err := unix.PidfdOpen(cmd.Process.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "pidfd") // in the poller from here on
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	// Ended, not reaped: the pidfd is readable.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	// Nothing else runs here: the poller takes the readiness while this
	// goroutine sleeps.
	time.Sleep(100 * time.Millisecond)
	waited := make(chan error, 1)
	go func() { waited <- waitReadable(rc) }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		f.SetReadDeadline(aLongTimeAgo)
		<-waited
		t.Fatal("the end of the process was lost: the wait began after the poller took it")
	}
}
