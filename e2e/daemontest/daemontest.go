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
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nudge is the Go package of the nudge binary.
const Nudge = "nudge/cmd/nudge"

// TestHooks is the build tag of the hooks a test may set through the
// environment (NUDGE_TEST_ENTER_GAP: internal/inject); release builds
// have none.
const TestHooks = "nudge_testhooks"

// EnvRace, set, builds the binaries with the race detector; a daemon that
// reports a race fails its test.
const EnvRace = "NUDGE_E2E_RACE"

// stopWait bounds how long a daemon may take to stop or exit.
const stopWait = 10 * time.Second

// Build builds the Go package pkg into dir and returns the binary's path,
// named after the package's last element. The build carries the test
// hooks (TestHooks), which act only when a test sets their variable, and
// the race detector when EnvRace is set (make race).
func Build(dir, pkg string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go toolchain not found to build %s: %w", pkg, err)
	}
	bin := filepath.Join(dir, path.Base(pkg))
	args := []string{"build", "-tags", TestHooks, "-o", bin}
	if os.Getenv(EnvRace) != "" {
		args = append(args, "-race")
	}
	out, err := exec.Command(goTool, append(args, pkg)...).CombinedOutput()
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

// CLI runs the built nudge with args and env (Run) and returns its
// standard output; an exit status other than 0 is an error, which carries
// the status and the standard error.
func CLI(env []string, args ...string) ([]byte, error) {
	code, out, stderr, err := Run(env, args...)
	if err == nil && code != 0 {
		err = fmt.Errorf("nudge %v: exit status %d: %s", args, code, stderr)
	}
	return out, err
}

// Run runs the built nudge with args and env, for at most 20 s, and returns
// its exit status, standard output and standard error; err is for a nudge
// that did not run or did not exit by itself.
func Run(env []string, args ...string) (code int, stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Bin(Nudge), args...)
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second // a child left holding the output does not hold the test
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.Exited() {
		err = nil
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("not done in 20 s: %w", err)
		}
		return -1, out.Bytes(), errOut.Bytes(), fmt.Errorf("nudge %v: %w: %s", args, err, errOut.Bytes())
	}
	return cmd.ProcessState.ExitCode(), out.Bytes(), errOut.Bytes(), nil
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
		if bytes.Contains(d.Log.Bytes(), []byte("WARNING: DATA RACE")) {
			t.Errorf("the daemon reported a data race")
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
// scan done (docs/behaviour.md §8), so it treats everything after it as new.
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

// Claude appends records to the transcript of Claude Code session in the
// folder cwd, under home's ~/.claude, each with the fields the CLI gives
// every record (docs/agents/claude.md).
func Claude(t testing.TB, home, cwd, session string, records ...map[string]any) {
	t.Helper()
	dir := filepath.Join(home, ".claude", "projects", regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(cwd, "-"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, rec := range records {
		claudeRecords++
		rec["sessionId"], rec["cwd"], rec["isSidechain"], rec["version"] = session, cwd, false, "2.1.332"
		rec["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		rec["uuid"] = fmt.Sprintf("e2e-%s-%d", session, claudeRecords)
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	f, err := os.OpenFile(filepath.Join(dir, session+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// claudeRecords numbers the records Claude writes, for their ids.
var claudeRecords int

// ClaudePrompt is a person's typed message to Claude Code.
func ClaudePrompt(text string) map[string]any {
	return map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text},
		"origin": map[string]any{"kind": "human"}, "promptSource": "typed", "turnOrigin": "human"}
}

// ClaudeAPIError is Claude Code's record of a turn that died from an API
// error: the error's kind ("server_error", "authentication_failed", …),
// the HTTP status and the text the person saw.
func ClaudeAPIError(kind string, status int, text string) map[string]any {
	return map[string]any{"type": "assistant", "isApiErrorMessage": true, "error": kind, "apiErrorStatus": status,
		"message": map[string]any{"model": "<synthetic>", "role": "assistant", "stop_reason": "stop_sequence", "stop_sequence": "",
			"content": []any{map[string]any{"type": "text", "text": text}}}}
}

// ClaudeTurnDone is Claude Code's record of a turn that completed.
func ClaudeTurnDone() []map[string]any {
	return []map[string]any{
		{"type": "assistant", "message": map[string]any{"id": fmt.Sprintf("msg_e2e_%d", time.Now().UnixNano()), "model": "claude-opus-5-5",
			"stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": "Done."}}}},
		{"type": "system", "subtype": "turn_duration", "durationMs": 100, "messageCount": 2, "isMeta": false},
	}
}
