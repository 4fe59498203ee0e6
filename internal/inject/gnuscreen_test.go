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
	"testing"
	"time"

	"nudge/internal/testenv"
)

// screenServer is a private screen socket folder for one test; its
// sessions are ended in Cleanup.
type screenServerDir struct {
	t   *testing.T
	dir string // SCREENDIR, also where outputs go
	env []string
}

func newScreenDir(t *testing.T) *screenServerDir {
	t.Helper()
	testenv.Need(t, "screen")
	// A short folder: a unix socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "nudge-screen-")
	if err != nil {
		t.Fatal(err)
	}
	s := &screenServerDir{t: t, dir: dir}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STY=") && !strings.HasPrefix(kv, "WINDOW=") && !strings.HasPrefix(kv, "SCREENDIR=") && !strings.HasPrefix(kv, "TMUX") {
			s.env = append(s.env, kv)
		}
	}
	s.env = append(s.env, "SCREENDIR="+dir, "SHELL=/bin/sh", "TERM=xterm")
	t.Cleanup(func() {
		sessions, _ := filepath.Glob(filepath.Join(dir, "*.*"))
		for _, sock := range sessions {
			s.screenQuiet("-S", filepath.Base(sock), "-X", "quit")
		}
		_ = os.RemoveAll(dir)
	})
	return s
}

func (s *screenServerDir) screenQuiet(args ...string) (string, error) {
	cmd := exec.Command("screen", args...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (s *screenServerDir) screen(args ...string) string {
	s.t.Helper()
	out, err := s.screenQuiet(args...)
	if err != nil {
		s.t.Fatalf("screen %v: %v: %s", args, err, out)
	}
	return out
}

// screenWindow is a window running a shell command of the test.
type screenWindow struct {
	sty    string // "123.name"
	window string
	pid    int    // the window's process
	out    string // what the window's command writes what it receives to
}

// start opens session name (or, with window, a new window of it) running
// script once the window's terminal is set up; $OUT names the output file.
func (s *screenServerDir) start(name, script string, inSession ...string) screenWindow {
	s.t.Helper()
	base := filepath.Join(s.dir, fmt.Sprintf("%s-%d", name, len(inSession)))
	out, pidFile := base+".out", base+".pid"
	script = strings.ReplaceAll(script, "$OUT", "'"+out+"'")
	script = "echo $$ > '" + pidFile + "'; " + script
	if len(inSession) == 0 {
		s.screen("-dmS", name, "sh", "-c", script)
	} else {
		s.screen("-S", inSession[0], "-X", "screen", "sh", "-c", script)
	}
	pid := pidFrom(s.t, pidFile)
	testenv.Execed(pid)
	sty, _, _ := processEnv(pid, "STY")
	window, _, _ := processEnv(pid, "WINDOW")
	return screenWindow{sty: sty, window: window, pid: pid, out: out}
}

func TestScreenDeliversTextLiterally(t *testing.T) {
	s := newScreenDir(t)
	long := strings.Repeat("grüße → ", 120) + "end"
	texts := []string{
		"echo \"a;b\" $HOME ${HOME} `id` 'q' \\ && x=1; y=2 | grep -v ~ # %s {};",
		"^M ^[ \\^ \\\\ \\012 trailing\\",
		"$PATH $$ ${SHELL:-x} \\$HOME",
		"-p 0 -X quit",
		"first line\nsecond line;",
		long,
	}
	for i, text := range texts {
		// Raw mode: every byte arrives unchanged, Enter stays "\r".
		w := s.start(fmt.Sprintf("raw%d", i), fmt.Sprintf("stty raw echo -echoctl; head -c %d > $OUT", len(text)+1))
		d, err := New(NewScreen()).Deliver(context.Background(), Target{Agent: "claude", PID: w.pid}, text)
		if err != nil {
			t.Fatalf("Deliver(%q): %v", text, err)
		}
		if d.Backend != "screen" || d.Where != filepath.Join(s.dir, w.sty)+" 0" {
			t.Errorf("Deliver(%q) = %+v, want screen at %s 0", text, d, filepath.Join(s.dir, w.sty))
		}
		received(t, testPane{id: w.sty, out: w.out}, text+"\r")
	}
}

func TestScreenLocatesTheAgentUnderItsWindow(t *testing.T) {
	s := newScreenDir(t)
	first := s.start("agent", "stty echo; cat > $OUT; true")
	child := childOf(t, first.pid, "cat")
	second := s.start("second", "stty echo; cat > $OUT", "agent")

	w, err := NewScreen().Locate(context.Background(), Target{PID: child})
	if err != nil {
		t.Fatalf("Locate: %v", err)
	}
	if w.Pane != "0" || w.PID != child || w.PanePID != first.pid || w.Started == "" || w.Server != filepath.Join(s.dir, first.sty) {
		t.Errorf("Locate = %+v, want window 0 of %s, pane pid %d, agent %d", w, first.sty, first.pid, child)
	}
	if err := NewScreen().Send(context.Background(), w, "to the child"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	received(t, testPane{id: "0", out: first.out}, "to the child\n")

	w2, err := NewScreen().Locate(context.Background(), Target{PID: second.pid})
	if err != nil || w2.Pane != "1" || w2.PanePID != second.pid {
		t.Fatalf("Locate(second window) = %+v, %v", w2, err)
	}
	if err := NewScreen().Send(context.Background(), w2, "to window 1"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	received(t, testPane{id: "1", out: second.out}, "to window 1\n")
	if got, _ := os.ReadFile(first.out); string(got) != "to the child\n" {
		t.Errorf("window 0 also received %q", got)
	}
}

func TestScreenRefusesWhatTheWindowDoesNotHold(t *testing.T) {
	s := newScreenDir(t)
	agent := s.start("agent", "stty echo; cat > $OUT")
	ctx := context.Background()

	// No STY at all.
	plain := exec.Command("sleep", "60")
	plain.Env = s.env
	startProcess(t, plain)
	testenv.Execed(plain.Process.Pid)
	if _, err := NewScreen().Locate(ctx, Target{PID: plain.Process.Pid}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("Locate(no terminal) = %v, want %v", err, ErrNotInTerminal)
	}
	pid, _ := onTerminal(t)
	if _, err := NewScreen().Locate(ctx, Target{PID: pid}); !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), "no STY") {
		t.Errorf("Locate(no STY) = %v", err)
	}

	// STY and WINDOW name the session, but the process runs on a terminal
	// of its own, not under screen.
	spoof, _ := onTerminal(t, "STY="+agent.sty, "WINDOW=0", "SCREENDIR="+s.dir)
	if _, err := NewScreen().Locate(ctx, Target{PID: spoof}); !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), "does not run under screen session") {
		t.Errorf("Locate(spoofed STY) = %v", err)
	}

	// A process in window 1 that claims window 0.
	liar := s.start("liar", "exec env WINDOW=0 sh -c 'stty echo; cat > $OUT'", "agent")
	if _, err := NewScreen().Locate(ctx, Target{PID: liar.pid}); !errors.Is(err, ErrOtherProcess) {
		t.Errorf("Locate(claims another window) = %v, want %v", err, ErrOtherProcess)
	}
	// Two windows claim number 0 (as after `:number`): even the true one is refused.
	if _, err := NewScreen().Locate(ctx, Target{PID: agent.pid}); !errors.Is(err, ErrOtherProcess) || !strings.Contains(err.Error(), "claimed by 2") {
		t.Errorf("Locate(window number claimed twice) = %v", err)
	}
	s.screen("-S", agent.sty, "-p", "1", "-X", "kill")
	waitFor(t, "window 1 to close", func() bool { return processGone(liar.pid) })

	// The pid now names another run.
	w, err := NewScreen().Locate(ctx, Target{PID: agent.pid})
	if err != nil {
		t.Fatal(err)
	}
	w.Started += "1"
	if err := NewScreen().Send(ctx, w, "refused"); !errors.Is(err, ErrOtherProcess) {
		t.Errorf("Send(other start time) = %v", err)
	}

	// The window is gone.
	w.Started = w.Started[:len(w.Started)-1]
	s.screen("-S", agent.sty, "-p", "0", "-X", "kill")
	waitFor(t, "window 0 to close", func() bool { return processGone(agent.pid) })
	if err := NewScreen().Send(ctx, w, "refused"); !errors.Is(err, ErrGone) {
		t.Errorf("Send(killed window) = %v, want %v", err, ErrGone)
	}
	if got, _ := os.ReadFile(agent.out); len(got) != 0 {
		t.Errorf("a refused window received %q", got)
	}
}

func TestScreenScreenCheckedBeforeTyping(t *testing.T) {
	s := newScreenDir(t)
	boxed := s.start("boxed", "stty echo; printf 'Would you like to run it?\\n'; cat > $OUT")
	idle := s.start("idle", "stty echo; printf '> Ask anything\\n'; cat > $OUT")
	sc := NewScreen()
	ctx := context.Background()
	for _, w := range []screenWindow{boxed, idle} {
		where, err := sc.Locate(ctx, Target{PID: w.pid})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the screen of "+w.sty, func() bool {
			text, _ := sc.Screen(ctx, where)
			return strings.Contains(text, "Ask anything") || strings.Contains(text, "Would you")
		})
	}
	inj := New(sc)
	_, err := inj.Deliver(ctx, Target{PID: boxed.pid, ScreenReady: boxOnScreen}, "refused")
	if !errors.Is(err, ErrNotIdle) || !strings.Contains(err.Error(), "approval box") {
		t.Fatalf("Deliver(box on screen) = %v, want ErrNotIdle", err)
	}
	if _, err := inj.Deliver(ctx, Target{PID: idle.pid, ScreenReady: boxOnScreen}, "typed"); err != nil {
		t.Fatalf("Deliver(idle screen): %v", err)
	}
	received(t, testPane{id: idle.sty, out: idle.out}, "typed\n")
	if got, _ := os.ReadFile(boxed.out); len(got) != 0 {
		t.Errorf("the boxed window received %q", got)
	}
}

func TestHardcopyText(t *testing.T) {
	// "❯ grüße" as screen 4 writes it: U+276F keeps its low byte, ü and ß are Latin-1.
	if got := hardcopyText([]byte("o gr\xfc\xdfe\n")); got != "o grüße\n" {
		t.Errorf("hardcopyText = %q", got)
	}
}

func TestScreenEscape(t *testing.T) {
	if got := screenEscape(`a\b^c$d é`); got != `a\\b\^c\$d é` {
		t.Errorf("screenEscape = %q", got)
	}
}

func TestScreenPressesEnterOnceTheTextShows(t *testing.T) {
	s := newScreenDir(t)
	w := s.start("agent", slowReader)
	text := "Your previous attempt failed; please continue where you left off."
	if _, err := New(NewScreen()).Deliver(context.Background(), Target{Agent: "claude", PID: w.pid}, text); err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	readApart(t, w.out, text)
}

// screen's client can wait forever for a query's answer: it is asked once
// more, and a second silence is an error, not a hang.
func TestScreenAsksAgainWhenAQueryIsNotAnswered(t *testing.T) {
	for _, tc := range []struct {
		name     string
		silences int
		want     string
	}{
		{"answered the second time", 1, "0 (sh)"},
		{"never answered", 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// A stand-in for screen's client: silent (as if waiting for the
			// server's signal) for the first queries, then it answers.
			standIn := filepath.Join(dir, "screen")
			script := fmt.Sprintf("#!/bin/sh\necho >> %s/calls\n[ $(wc -l < %s/calls) -le %d ] && exec sleep 60\necho '0 (sh)'\n", dir, dir, tc.silences)
			if err := os.WriteFile(standIn, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			x := &Screen{program: standIn, answerWait: 200 * time.Millisecond}
			out, err := x.windowNumber(context.Background(), Where{Server: "123.agent", Pane: "0"})
			if tc.want != "" && (err != nil || strings.TrimSpace(out) != tc.want) {
				t.Fatalf("windowNumber = %q, %v; want %q", out, err, tc.want)
			}
			if tc.want == "" && (err == nil || !strings.Contains(err.Error(), "no answer")) {
				t.Fatalf("windowNumber = %q, %v; want an error saying no answer came", out, err)
			}
			calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
			if n := strings.Count(string(calls), "\n"); n != 2 {
				t.Fatalf("screen asked %d times, want 2", n)
			}
		})
	}
}
