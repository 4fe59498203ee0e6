//go:build linux

package inject

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"

	"nudge/internal/testenv"
)

// The zellij backend has never run against a real zellij: none can be
// installed on the test machines. These tests run it against a stand-in
// `zellij` that records its argv and answers like zellij 0.44 does
// (list-panes --json in the shape its PaneListEntry serializes to,
// testdata/zellij/list-panes.json; dump-screen to standard output), and a
// stand-in server process that runs as `zellij --server <folder>/<session>`
// and starts each pane's process on a terminal of its own with
// ZELLIJ_SESSION_NAME and ZELLIJ_PANE_ID, as zellij's server does.

// envZellijServer makes the test binary play a zellij server: it starts
// the pane script given after "--" on a new terminal and waits.
const envZellijServer = "NUDGE_TEST_ZELLIJ_SERVER"

func TestZellijServerStandIn(t *testing.T) {
	spec := os.Getenv(envZellijServer)
	if spec == "" {
		t.Skip("runs only as a stand-in zellij server")
	}
	session, rest, _ := strings.Cut(spec, "\x1f")
	paneID, script, _ := strings.Cut(rest, "\x1f")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	cmd := exec.Command("sh", "-c", script)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZELLIJ") && !strings.HasPrefix(kv, envZellijServer) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ZELLIJ=0", "ZELLIJ_SESSION_NAME="+session, "ZELLIJ_PANE_ID="+paneID)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	_ = cmd.Wait()
}

// zellijPaneProcess starts a stand-in server of session running script in
// pane paneID and returns the pane's process (the script's shell).
func zellijPaneProcess(t *testing.T, session, paneID, script string) int {
	t.Helper()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pane.pid")
	server := &exec.Cmd{
		Path: os.Args[0],
		Args: []string{"zellij", "-test.run=^TestZellijServerStandIn$", "--", "--server", filepath.Join(dir, session)},
		Env:  append(os.Environ(), envZellijServer+"="+session+"\x1f"+paneID+"\x1fecho $$ > '"+pidFile+"'; "+script),
	}
	startProcess(t, server)
	pid := pidFrom(t, pidFile)
	testenv.Execed(pid)
	return pid
}

// zellijStandIn puts the recording `zellij` on PATH: list-panes answers the
// recorded listing, dump-screen the file "screen", to which the characters
// written draw themselves.
func zellijStandIn(t *testing.T) *recorder {
	t.Helper()
	rec := standIn(t, "zellij", `case "$ARGS" in
*list-panes*) cat "$D/panes.json" ;;
*dump-screen*) cat "$D/screen" ;;
*write-chars*) for a; do :; done; printf '%s' "$a" >> "$D/screen" ;;
esac`)
	listing, err := os.ReadFile(filepath.Join("testdata", "zellij", "list-panes.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec.reply("panes.json", string(listing))
	rec.reply("screen", "> Ask anything\n")
	return rec
}

func TestZellijDeliversToTheAgentsPane(t *testing.T) {
	rec := zellijStandIn(t)
	pane := zellijPaneProcess(t, "work", "3", "sleep 60 & wait")
	agent := childOf(t, pane, "sleep")
	testenv.Execed(agent)
	ctx := context.Background()

	w, err := NewZellij().Locate(ctx, Target{PID: agent})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	if w.Server != "work" || w.Pane != "terminal_3" || w.PID != agent || w.PanePID != pane || w.Started == "" {
		t.Errorf("Locate = %+v, want pane terminal_3 of session work, pane pid %d", w, pane)
	}

	text := "-x \"a;b\" $HOME `id` --pane-id 1 grüße\nsecond line"
	d, err := New(NewZellij()).Deliver(ctx, Target{PID: agent, ScreenReady: boxOnScreen}, text)
	if err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	if d.Backend != "zellij" || d.Where != "work terminal_3" {
		t.Errorf("Deliver = %+v", d)
	}
	calls := rec.calls()
	var got []string
	for _, c := range calls {
		got = append(got, strings.Join(c.argv, " "))
	}
	want := []string{
		"--session work action list-panes --json", // Locate
		"--session work action list-panes --json", // Deliver's Locate
		"--session work action dump-screen --pane-id terminal_3",
		"--session work action list-panes --json", // Send's re-check
		"--session work action dump-screen --pane-id terminal_3",
		"--session work action write-chars --pane-id terminal_3 -- " + text,
		"--session work action dump-screen --pane-id terminal_3", // the text shows
		"--session work action write --pane-id terminal_3 13",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("zellij calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	argvIs(t, "write-chars", calls[5].argv, "--session", "work", "action", "write-chars", "--pane-id", "terminal_3", "--", text)

	// A box on the screen: nothing is written.
	rec.reply("screen", "Would you like to run it?\n")
	_, err = New(NewZellij()).Deliver(ctx, Target{PID: agent, ScreenReady: boxOnScreen}, "refused")
	if !errors.Is(err, ErrNotIdle) {
		t.Fatalf("Deliver(box on screen) = %v, want %v", err, ErrNotIdle)
	}
	for _, c := range rec.calls()[len(calls):] {
		if argv := strings.Join(c.argv, " "); strings.Contains(argv, "write") {
			t.Errorf("wrote although a box is open: %s", argv)
		}
	}
}

func TestZellijRefusesWhatThePaneDoesNotHold(t *testing.T) {
	zellijStandIn(t)
	ctx := context.Background()
	for _, c := range []struct {
		what, pane string
		want       error
		says       string
	}{
		{"exited command pane", "5", ErrGone, "its command exited"},
		{"pane not listed", "7", ErrGone, "is gone from zellij session"},
		{"plugin with the pane's number", "4", ErrGone, "is gone from zellij session"},
	} {
		pid := zellijPaneProcess(t, "work", c.pane, "exec sleep 60")
		execedInto(pid, "sleep")
		if _, err := NewZellij().Locate(ctx, Target{PID: pid}); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Locate(%s) = %v, want %v saying %q", c.what, err, c.want, c.says)
		}
	}

	// Not in zellij, and claiming a pane without running under the server.
	plain, _ := onTerminal(t)
	if _, err := NewZellij().Locate(ctx, Target{PID: plain}); !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), "no ZELLIJ_SESSION_NAME") {
		t.Errorf("Locate(not in zellij) = %v", err)
	}
	spoof, _ := onTerminal(t, "ZELLIJ_SESSION_NAME=work", "ZELLIJ_PANE_ID=3")
	if _, err := NewZellij().Locate(ctx, Target{PID: spoof}); !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), "does not run under the server") {
		t.Errorf("Locate(spoofed pane) = %v", err)
	}
	// A server of another session.
	other := zellijPaneProcess(t, "play", "3", "exec env ZELLIJ_SESSION_NAME=work sleep 60")
	execedInto(other, "sleep")
	if _, err := NewZellij().Locate(ctx, Target{PID: other}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("Locate(pane of another session's server) = %v, want %v", err, ErrNotInTerminal)
	}

	// Located, then the pid names another run, then the pane's process ends.
	pane := zellijPaneProcess(t, "work", "3", "sleep 60 & wait")
	agent := childOf(t, pane, "sleep")
	testenv.Execed(agent)
	w, err := NewZellij().Locate(ctx, Target{PID: agent})
	if err != nil {
		t.Fatal(err)
	}
	w.Started += "1"
	if err := NewZellij().Send(ctx, w, "refused"); !errors.Is(err, ErrOtherProcess) {
		t.Errorf("Send(other start time) = %v", err)
	}
	w.Started = w.Started[:len(w.Started)-1]
	if err := killPid(pane); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pane's process to end", func() bool { return processGone(pane) })
	if err := NewZellij().Send(ctx, w, "refused"); !errors.Is(err, ErrGone) && !errors.Is(err, ErrOtherProcess) {
		t.Errorf("Send(pane process gone) = %v", err)
	}
}

func FuzzZellijPanes(f *testing.F) {
	listing, err := os.ReadFile(filepath.Join("testdata", "zellij", "list-panes.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(listing))
	f.Add(`[{"id": 4294967296}]`)
	f.Add(`[{"id": 3, "is_plugin": "no"}]`)
	f.Fuzz(func(t *testing.T, out string) {
		panes, err := parseZellijPanes(out)
		if err == nil {
			for _, p := range panes {
				_ = strconv.FormatUint(uint64(p.ID), 10)
			}
		}
	})
}
