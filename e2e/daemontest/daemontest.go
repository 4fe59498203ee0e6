// Package daemontest builds the real nudge binary for end-to-end test
// packages and runs it as a daemon inside a test: start, readiness, CLI
// calls, stop.
package daemontest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nudge is the Go package of the nudge binary.
const Nudge = "nudge/cmd/nudge"

// stopWait bounds how long a daemon may take to stop or exit.
const stopWait = 10 * time.Second

// Build builds the Go package pkg into dir and returns the binary's path,
// named after the package's last element.
func Build(dir, pkg string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go toolchain not found to build %s: %w", pkg, err)
	}
	bin := filepath.Join(dir, path.Base(pkg))
	out, err := exec.Command(goTool, "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, strings.TrimSpace(string(out)))
	}
	return bin, nil
}

// built maps a package to the binary Main built for it.
var built = map[string]string{}

// Main builds nudge and the packages pkgs into a temporary folder, runs the
// tests and exits with their status. Bin names the built binaries.
func Main(m *testing.M, pkgs ...string) {
	os.Exit(runMain(m, pkgs))
}

func runMain(m *testing.M, pkgs []string) int {
	dir, err := os.MkdirTemp("", "nudge-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "daemontest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	for _, pkg := range append([]string{Nudge}, pkgs...) {
		bin, err := Build(dir, pkg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "daemontest:", err)
			return 1
		}
		built[pkg] = bin
	}
	return m.Run()
}

// Bin returns the binary Main built for pkg.
func Bin(pkg string) string {
	bin, ok := built[pkg]
	if !ok {
		panic("daemontest: " + pkg + " was not built: list it in daemontest.Main")
	}
	return bin
}

// CLI runs the built nudge with args and env (for at most 20 s) and
// returns its standard output; an error carries its standard error.
func CLI(env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Bin(Nudge), args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("nudge %v: %w: %s", args, err, stderr.String())
	}
	return out, nil
}

// Daemon is one running `nudge run`.
type Daemon struct {
	Cmd *exec.Cmd
	// Log is the daemon's standard output and error.
	Log  *bytes.Buffer
	env  []string
	done chan struct{}
	err  error // of Wait, once done is closed
}

// Start runs the built nudge with args ("run", "--headless") and env. When
// the test ends a daemon still running gets SIGTERM, then SIGKILL after
// 10 s; a failed test shows its log.
func Start(t testing.TB, env []string, args ...string) *Daemon {
	t.Helper()
	return StartWrapped(t, env, nil, args...)
}

// StartWrapped is Start with the binary run by wrapper, a command line that
// ends with the program to run (e.g. one that drops privileges).
func StartWrapped(t testing.TB, env, wrapper []string, args ...string) *Daemon {
	t.Helper()
	argv := append(append(append([]string{}, wrapper...), Bin(Nudge)), args...)
	d := &Daemon{Cmd: exec.Command(argv[0], argv[1:]...), Log: &bytes.Buffer{}, env: env, done: make(chan struct{})}
	d.Cmd.Env = env
	d.Cmd.Stdout, d.Cmd.Stderr = d.Log, d.Log
	if err := d.Cmd.Start(); err != nil {
		t.Fatalf("start nudge %v: %v", args, err)
	}
	go func() {
		d.err = d.Cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		if !d.exited() {
			d.Cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-d.done:
			case <-time.After(stopWait):
				d.Cmd.Process.Kill()
				<-d.done
			}
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", d.Log)
		}
	})
	return d
}

func (d *Daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// Exit waits up to 10 s for the daemon to end and returns its exit status
// (-1 when a signal ended it).
func (d *Daemon) Exit(t testing.TB) int {
	t.Helper()
	select {
	case <-d.done:
		var ee *exec.ExitError
		if errors.As(d.err, &ee) {
			return ee.ExitCode()
		}
		if d.err != nil {
			t.Fatal(d.err)
		}
		return 0
	case <-time.After(stopWait):
		t.Fatalf("nudge did not stop within %s", stopWait)
		return -1
	}
}

// WaitReady waits until `nudge status --json` reports the daemon's first
// scan done (SPEC §8), so it treats everything after it as new.
func (d *Daemon) WaitReady(t testing.TB) {
	t.Helper()
	Eventually(t, "daemon ready", 30*time.Second, func() bool {
		if d.exited() {
			t.Fatalf("nudge daemon exited during start-up:\n%s", d.Log)
		}
		out, err := CLI(d.env, "status", "--json")
		return err == nil && Ready(out)
	})
}

// Ready reports whether the output of `nudge status --json` says the
// daemon is ready.
func Ready(status []byte) bool {
	var st struct {
		Daemon *struct {
			Ready bool `json:"ready"`
		} `json:"daemon"`
	}
	return json.Unmarshal(status, &st) == nil && st.Daemon != nil && st.Daemon.Ready
}

// Eventually polls cond until it holds, failing the test after within.
func Eventually(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
