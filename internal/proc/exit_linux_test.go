//go:build linux

package proc

import (
	"os"
	"os/exec"
	"testing"
	"time"
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
