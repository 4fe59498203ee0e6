//go:build linux

package inject

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"nudge/internal/testenv"
)

// agentNamed starts a real process named like an agent (a symlink to sh
// sleeping) in dir, with args after the script and extra files as fd 3…;
// it is killed in Cleanup.
func agentNamed(t *testing.T, name, dir string, args []string, files ...*os.File) int {
	t.Helper()
	link := filepath.Join(t.TempDir(), name)
	if err := os.Symlink("/bin/sh", link); err != nil {
		t.Fatal(err)
	}
	return startIn(t, dir, files, append([]string{link, "-c", "sleep 60; exit 0"}, args...)...)
}

// startIn starts argv in dir and returns its pid; it is killed in Cleanup.
func startIn(t *testing.T, dir string, files []*os.File, argv ...string) int {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.ExtraFiles = dir, files
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testenv.Execed(cmd.Process.Pid)
	return cmd.Process.Pid
}

func TestFindProcess(t *testing.T) {
	ctx := context.Background()
	projA, projB := t.TempDir(), t.TempDir()
	execs := []string{"nudgeagent"}

	_, err := FindProcess(ctx, Hint{Agent: "x", Project: projA, Executables: execs})
	if !errors.Is(err, ErrNoProcess) {
		t.Fatalf("before any agent runs: %v, want ErrNoProcess", err)
	}

	a := agentNamed(t, "nudgeagent", projA, nil)
	agentNamed(t, "nudgeagent", projB, nil)
	agentNamed(t, "otheragent", projA, nil)
	if pid, err := FindProcess(ctx, Hint{Agent: "x", Project: projA, Executables: execs}); err != nil || pid != a {
		t.Fatalf("one agent in project A: pid %d, %v; want %d", pid, err, a)
	}

	// A second agent in the same folder: never guessed.
	a2 := agentNamed(t, "nudgeagent", projA, nil)
	_, err = FindProcess(ctx, Hint{Agent: "x", Session: "s-1", Project: projA, Executables: execs})
	if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), fmt.Sprint(a)) || !strings.Contains(err.Error(), fmt.Sprint(a2)) {
		t.Fatalf("two agents in project A: %v, want ErrAmbiguous naming %d and %d", err, a, a2)
	}

	// The session on a command line settles it.
	a3 := agentNamed(t, "nudgeagent", projA, []string{"--resume", "s-3"})
	if pid, err := FindProcess(ctx, Hint{Agent: "x", Session: "s-3", Project: projA, Executables: execs}); err != nil || pid != a3 {
		t.Fatalf("session on the command line: pid %d, %v; want %d", pid, err, a3)
	}

	// So does holding the transcript open.
	transcript := filepath.Join(t.TempDir(), "s-4.jsonl")
	if err := os.WriteFile(transcript, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(transcript)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a4 := agentNamed(t, "nudgeagent", projA, nil, f)
	if pid, err := FindProcess(ctx, Hint{Agent: "x", Session: "s-4", Project: projA, File: transcript, Executables: execs}); err != nil || pid != a4 {
		t.Fatalf("transcript held open: pid %d, %v; want %d", pid, err, a4)
	}
}

func TestFindProcessByScriptName(t *testing.T) {
	// An agent run as an interpreter's script shows its name only in argv[1]
	// (node …/bin/codex.js); a launcher and the agent it starts count once.
	proj := t.TempDir()
	script := filepath.Join(t.TempDir(), "nudgescript.js")
	child := filepath.Join(t.TempDir(), "nudgescript")
	if err := os.Symlink("/bin/sh", child); err != nil {
		t.Fatal(err)
	}
	body := "'" + child + "' -c 'sleep 60; exit 0'; exit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	launcher := startIn(t, proj, nil, "/bin/sh", script)
	waitFor(t, "the agent under its launcher", func() bool {
		kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", launcher, launcher))
		return strings.TrimSpace(string(kids)) != ""
	})
	pid, err := FindProcess(context.Background(), Hint{Agent: "x", Project: proj, Executables: []string{"nudgescript"}})
	if err != nil || pid != launcher {
		t.Fatalf("FindProcess = %d, %v; want the launcher %d", pid, err, launcher)
	}
}

// Another user's process named like the agent, in the session's folder and
// naming the session, is never found: not even as a second candidate.
func TestFindProcessIgnoresOtherUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a process as another user")
	}
	open := func() string { // a folder the other user can enter
		d := t.TempDir()
		for _, p := range []string{filepath.Dir(d), d} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	proj, bin := open(), open()
	link := filepath.Join(bin, "nudgeagent")
	if err := os.Symlink("/bin/sh", link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "-c", "sleep 60; exit 0", "--resume", "s-9")
	cmd.Dir = proj
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testenv.Execed(cmd.Process.Pid)
	h := Hint{Agent: "x", Session: "s-9", Project: proj, Executables: []string{"nudgeagent"}}
	if pid, err := FindProcess(context.Background(), h); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("only another user's agent runs: pid %d, %v; want ErrNoProcess", pid, err)
	}
	mine := agentNamed(t, "nudgeagent", proj, nil)
	if pid, err := FindProcess(context.Background(), h); err != nil || pid != mine {
		t.Fatalf("beside another user's agent that names the session: pid %d, %v; want mine, %d", pid, err, mine)
	}
}
