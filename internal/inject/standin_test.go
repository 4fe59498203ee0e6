//go:build linux

package inject

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"nudge/internal/testenv"
)

// standIn puts a program called name on PATH that records each call (argv,
// stdin, working folder and the variables in keep) under its folder, then
// runs body (sh) with $D set to that folder and $ARGS to its arguments.
func standIn(t *testing.T, name, body string, keep ...string) *recorder {
	t.Helper()
	dir := t.TempDir()
	var env strings.Builder
	for _, k := range keep {
		fmt.Fprintf(&env, "printf '%%s' \"$%s\" > \"$c/env.%s\"\n", k, k)
	}
	script := fmt.Sprintf(`#!/bin/sh
D='%s'
n=$(cat "$D/n" 2>/dev/null || echo 0); echo $((n+1)) > "$D/n"
c="$D/call.$n"; mkdir "$c"
printf '%%s\0' "$@" > "$c/argv"
pwd > "$c/cwd"
cat > "$c/stdin"
%s
ARGS="$*"
%s
`, dir, env.String(), body)
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return &recorder{t: t, dir: dir}
}

// recorder reads back what a stand-in was called with.
type recorder struct {
	t   *testing.T
	dir string
}

// call is one recorded run of a stand-in.
type call struct {
	argv  []string
	stdin string
	cwd   string
	env   map[string]string
}

func (r *recorder) calls() []call {
	r.t.Helper()
	var out []call
	for i := 0; ; i++ {
		c := filepath.Join(r.dir, "call."+strconv.Itoa(i))
		argv, err := os.ReadFile(filepath.Join(c, "argv"))
		if err != nil {
			return out
		}
		stdin, _ := os.ReadFile(filepath.Join(c, "stdin"))
		cwd, _ := os.ReadFile(filepath.Join(c, "cwd"))
		cl := call{argv: strings.Split(strings.TrimSuffix(string(argv), "\x00"), "\x00"), stdin: string(stdin), cwd: strings.TrimSpace(string(cwd)), env: map[string]string{}}
		envs, _ := filepath.Glob(filepath.Join(c, "env.*"))
		for _, e := range envs {
			v, _ := os.ReadFile(e)
			cl.env[strings.TrimPrefix(filepath.Ext(e), ".")] = string(v)
		}
		out = append(out, cl)
	}
}

// reply sets a file the stand-in's body may print.
func (r *recorder) reply(name, content string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// onTerminal starts a process on a terminal of its own, with env added; it
// returns the pid and the terminal's device path.
func onTerminal(t *testing.T, env ...string) (int, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	cmd := exec.Command("sleep", "60")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEZTERM_") && !strings.HasPrefix(kv, "KITTY_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testenv.Execed(cmd.Process.Pid)
	return cmd.Process.Pid, tty.Name()
}

// execedInto waits (up to 10 s) until the process pid, whose shell execs
// prog, runs prog with its environment laid out: the pid a script writes
// before `exec prog` is the shell's, and /proc shows an empty environment
// while the exec is under way.
func execedInto(pid int, prog string) {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			return
		}
		if strings.TrimSpace(string(comm)) == prog {
			testenv.Execed(pid)
			return
		}
	}
}

// argvIs fails unless got is want.
func argvIs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("%s argv = %q, want %q", what, got, want)
	}
}
