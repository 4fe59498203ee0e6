// Package mcp runs `nudge mcp` from the real nudge binary under the MCP
// SDK's own client, against the real daemon watching a stand-in Claude Code
// session.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"nudge/e2e/daemontest"
	"nudge/internal/testenv"
)

// standin is the package of the stand-in Claude Code session.
const standin = "nudge/e2e/pipe/standin"

func TestMain(m *testing.M) { daemontest.Main(m, standin) }

// sessionID is the stand-in's session.
const sessionID = "11111111-1111-4111-8111-111111111111"

// world is one test's machine: a home with a project, nudge's data folder
// and log, the daemon, and the stand-in session fed through a pipe.
type world struct {
	t       *testing.T
	dir     string
	project string
	log     string
	env     []string
	daemon  *daemontest.Daemon
	typing  io.WriteCloser
	typeIn  func(text string) // types a line into an agent in a terminal
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, dir: dir, project: filepath.Join(dir, "home", "project"), log: filepath.Join(dir, "nudge.log")}
	if err := os.MkdirAll(w.project, 0o700); err != nil {
		t.Fatal(err)
	}
	w.env = daemontest.Env(filepath.Join(dir, "home"), filepath.Join(dir, "data"),
		"NUDGE_LOG_FILE="+w.log, "NUDGE_LOG_LEVEL=debug", "NUDGE_RETRY_DELAYS=1s,1s,1s")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(w.log)
			t.Logf("daemon log:\n%s", b)
		}
	})
	return w
}

func (w *world) startDaemon() {
	w.t.Helper()
	w.daemon = daemontest.Start(w.t, w.env, "run", "--headless")
	w.daemon.WaitReady(w.t)
}

// startAgent runs the stand-in in the project folder; typeLine feeds it.
func (w *world) startAgent(outcomes string) {
	w.t.Helper()
	cmd := exec.Command(daemontest.Bin(standin), "-outcomes", outcomes, "-received", filepath.Join(w.dir, "received.log"))
	cmd.Env, cmd.Dir = w.env, w.project
	in, err := cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.typing = in
	w.t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
}

func (w *world) typeLine(text string) {
	w.t.Helper()
	if w.typeIn != nil {
		w.typeIn(text)
		return
	}
	if _, err := fmt.Fprintln(w.typing, text); err != nil {
		w.t.Fatal(err)
	}
}

// connect starts `nudge mcp args...` and connects the SDK's client to it.
func (w *world) connect(args ...string) *sdk.ClientSession {
	w.t.Helper()
	cmd := exec.Command(daemontest.Bin(daemontest.Nudge), append([]string{"mcp"}, args...)...)
	cmd.Env = w.env
	client := sdk.NewClient(&sdk.Implementation{Name: "nudge-e2e", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		w.t.Fatalf("connect to nudge mcp: %v", err)
	}
	w.t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out; it returns
// the error text of a tool that failed.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		var texts []string
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: decode %s: %v", tool, b, err)
	}
	return ""
}

// turn is the part of a Turn the tests read.
type turn struct {
	Session   string
	State     string
	Ended     bool
	Outcome   string
	Class     string
	ErrorText string     `json:"error_text"`
	EndedAt   *time.Time `json:"ended_at"`
	Note      string
}

type sessionList struct {
	DaemonRunning bool `json:"daemon_running"`
	Sessions      []struct {
		Agent, Session, Project, State string
	}
}

func TestEveryToolAnswersAboutARejectedTurn(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	w.startAgent("ok,400")
	cs := w.connect()

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "get_session,list_inbox,list_sessions,wait" {
		t.Errorf("tools = %s, want the four read-only ones", got)
	}

	w.typeLine("hello")
	var done turn
	if msg := call(t, cs, "wait", map[string]any{"session": sessionID, "timeout_seconds": 30}, &done); msg != "" {
		t.Fatalf("wait: %s", msg)
	}
	if !done.Ended || done.Outcome != "done" || done.State != "finished" || done.Class != "" || done.EndedAt == nil {
		t.Fatalf("wait after a completed turn = %+v", done)
	}

	typed := time.Now()
	w.typeLine("write the report")
	var failed turn
	if msg := call(t, cs, "wait", map[string]any{"session": sessionID[:8], "since": typed.UTC().Format(time.RFC3339Nano), "timeout_seconds": 30}, &failed); msg != "" {
		t.Fatalf("wait: %s", msg)
	}
	if !failed.Ended || failed.Outcome != "failed" || failed.State != "failed" || failed.Class != "rejected" ||
		!strings.Contains(failed.ErrorText, "prompt is too long") || failed.Session != sessionID {
		t.Fatalf("wait after a rejected turn = %+v", failed)
	}
	if !failed.EndedAt.After(*done.EndedAt) {
		t.Errorf("the rejected turn ended at %v, not after the first (%v)", failed.EndedAt, done.EndedAt)
	}

	var got struct {
		Turn     turn
		Timeline struct {
			Session string
			State   string
			Events  []struct{ Kind, Class, Message string }
		}
	}
	if msg := call(t, cs, "get_session", map[string]any{"session": sessionID}, &got); msg != "" {
		t.Fatalf("get_session: %s", msg)
	}
	if got.Turn.Outcome != "failed" || got.Turn.Class != "rejected" || got.Timeline.State != "failed" {
		t.Errorf("get_session = %+v", got)
	}
	kinds := ""
	for _, e := range got.Timeline.Events {
		kinds += e.Kind + " "
	}
	if !strings.Contains(kinds, "turn_done") || !strings.Contains(kinds, "turn_failed") {
		t.Errorf("timeline events: %s", kinds)
	}
	if msg := call(t, cs, "get_session", map[string]any{"session": "99999999"}, &got); !strings.Contains(msg, "no session") {
		t.Errorf("get_session(unknown) = %q, want a clear error", msg)
	}

	for _, c := range []struct {
		filter map[string]any
		want   int
	}{
		{map[string]any{}, 1},
		{map[string]any{"agent": "claude"}, 1},
		{map[string]any{"agent": "codex"}, 0},
		{map[string]any{"state": "failed"}, 1},
		{map[string]any{"state": "finished"}, 0},
		{map[string]any{"folder": filepath.Dir(w.project)}, 1},
		{map[string]any{"folder": w.project + "-other"}, 0},
	} {
		var list sessionList
		if msg := call(t, cs, "list_sessions", c.filter, &list); msg != "" {
			t.Fatalf("list_sessions(%v): %s", c.filter, msg)
		}
		if len(list.Sessions) != c.want || !list.DaemonRunning {
			t.Errorf("list_sessions(%v) = %+v, want %d sessions from the running daemon", c.filter, list, c.want)
		}
	}
	// A filter that names no agent or state is an error that names those
	// there are, never an empty list that reads as "no such session".
	for _, c := range []struct {
		filter map[string]any
		says   string
	}{
		{map[string]any{"agent": "kimi-legacy"}, "kimi_code"},
		{map[string]any{"agent": "Claude"}, "claude"},
		{map[string]any{"state": "gaveup"}, "gave_up"},
	} {
		var list sessionList
		if msg := call(t, cs, "list_sessions", c.filter, &list); !strings.Contains(msg, c.says) {
			t.Errorf("list_sessions(%v) = %q, %+v; want an error naming %q", c.filter, msg, list, c.says)
		}
	}

	var inbox struct {
		Entries []struct {
			Session, Class string
			ErrorText      string `json:"error_text"`
			Read           bool
		}
	}
	if msg := call(t, cs, "list_inbox", map[string]any{"unread": true}, &inbox); msg != "" {
		t.Fatalf("list_inbox: %s", msg)
	}
	if len(inbox.Entries) != 1 || inbox.Entries[0].Class != "rejected" || !strings.Contains(inbox.Entries[0].ErrorText, "prompt is too long") || inbox.Entries[0].Read {
		t.Fatalf("list_inbox(unread) = %+v", inbox)
	}
	if _, err := daemontest.CLI(w.env, "inbox", "read-all"); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "list_inbox", map[string]any{"unread": true}, &inbox)
	if len(inbox.Entries) != 0 {
		t.Errorf("list_inbox(unread) after read-all = %+v", inbox)
	}

	// Without the daemon: the database answers, wait says why it cannot.
	if _, err := daemontest.CLI(w.env, "quit"); err != nil {
		t.Fatal(err)
	}
	if code := w.daemon.Exit(t); code != 0 {
		t.Fatalf("daemon exit status %d", code)
	}
	var stored sessionList
	if msg := call(t, cs, "list_sessions", map[string]any{"state": "failed"}, &stored); msg != "" {
		t.Fatalf("list_sessions without the daemon: %s", msg)
	}
	if stored.DaemonRunning || len(stored.Sessions) != 1 || stored.Sessions[0].Session != sessionID {
		t.Errorf("list_sessions without the daemon = %+v", stored)
	}
	if msg := call(t, cs, "get_session", map[string]any{"session": sessionID}, &got); msg != "" || got.Turn.Class != "rejected" {
		t.Errorf("get_session without the daemon = %+v %s", got.Turn, msg)
	}
	if msg := call(t, cs, "wait", map[string]any{"session": sessionID}, &failed); !strings.Contains(msg, "nudge run") {
		t.Errorf("wait without the daemon = %q, want an error saying to start it", msg)
	}
}

func TestWaitReturnsWhenTheTurnEnds(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	w.startAgent("500")
	cs := w.connect()

	// The session does not exist yet: wait waits for it to appear and end.
	type result struct {
		turn turn
		msg  string
	}
	got := make(chan result, 1)
	go func() {
		var r result
		r.msg = call(t, cs, "wait", map[string]any{"session": sessionID, "timeout_seconds": 60}, &r.turn)
		got <- r
	}()
	daemontest.Eventually(t, "wait to follow the daemon's changes", 10*time.Second, func() bool {
		b, _ := os.ReadFile(w.log)
		return strings.Contains(string(b), "change stream opened")
	})
	select {
	case r := <-got:
		t.Fatalf("wait returned before any turn: %+v %s", r.turn, r.msg)
	default:
	}
	// A provider error, and the stand-in has no terminal: nudge's
	// continuation cannot be delivered, so the turn ends failed with the
	// provider error's text (retrying in between is no end, and a dead turn
	// is never done).
	w.typeLine("hello")
	r := <-got
	if r.msg != "" || !r.turn.Ended || r.turn.Outcome != "failed" || r.turn.State != "gave_up" ||
		r.turn.Class != "provider_error" || !strings.Contains(r.turn.ErrorText, "API Error: 500") {
		t.Fatalf("wait = %+v %s, want the turn failed with the provider error", r.turn, r.msg)
	}
	if !strings.Contains(r.turn.Note, "nudge could not continue Claude Code") {
		t.Errorf("wait note %q does not say why nudge gave up", r.turn.Note)
	}

	var timedOut turn
	if msg := call(t, cs, "wait", map[string]any{"session": sessionID, "since": time.Now().UTC().Format(time.RFC3339Nano), "timeout_seconds": 1}, &timedOut); msg != "" {
		t.Fatalf("wait: %s", msg)
	}
	if timedOut.Ended || timedOut.Outcome != "timeout" || timedOut.State != "gave_up" {
		t.Errorf("wait for a turn that does not come = %+v", timedOut)
	}

	// The daemon stops while wait follows it: a clear error, at once.
	go func() {
		var r result
		r.msg = call(t, cs, "wait", map[string]any{"session": sessionID, "since": time.Now().UTC().Format(time.RFC3339Nano), "timeout_seconds": 600}, &r.turn)
		got <- r
	}()
	daemontest.Eventually(t, "the second wait to follow the daemon", 10*time.Second, func() bool {
		b, _ := os.ReadFile(w.log)
		return strings.Count(string(b), "change stream opened") == 3
	})
	if _, err := daemontest.CLI(w.env, "quit"); err != nil {
		t.Fatal(err)
	}
	if r := <-got; !strings.Contains(r.msg, "the daemon stopped") || !strings.Contains(r.msg, "nudge run") {
		t.Errorf("wait when the daemon stops = %+v %q", r.turn, r.msg)
	}
}

// startAgentInScreen runs the stand-in in a GNU screen window, where nudge
// can type its continuations.
func (w *world) startAgentInScreen(outcomes string) {
	w.t.Helper()
	testenv.Need(w.t, "screen")
	dir := filepath.Join(w.dir, "screen")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		w.t.Fatal(err)
	}
	env := append(w.env, "SCREENDIR="+dir, "TERM=xterm")
	screen := func(args ...string) {
		cmd := exec.Command("screen", args...)
		cmd.Env, cmd.Dir = env, w.project
		if out, err := cmd.CombinedOutput(); err != nil {
			w.t.Fatalf("screen %v: %v\n%s", args, err, out)
		}
	}
	// -U: the window speaks UTF-8, as Claude Code's needs to.
	screen("-U", "-dmS", "agent", daemontest.Bin(standin), "-outcomes", outcomes, "-received", filepath.Join(w.dir, "received.log"))
	w.t.Cleanup(func() { screen("-S", "agent", "-X", "quit") })
	daemontest.Eventually(w.t, "the stand-in registered", 10*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(w.dir, "home", ".claude", "sessions", "*.json"))
		return len(m) == 1
	})
	w.typing = nil
	w.typeIn = func(text string) { screen("-S", "agent", "-p", "0", "-X", "stuff", text+"^M") }
}

// A provider error of a session in screen: nudge types its continuation
// into the window, and wait answers only once that turn completed.
func TestWaitSeesNudgeContinueATurnInScreen(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	w.startAgentInScreen("500,ok")
	cs := w.connect()

	typed := time.Now()
	w.typeLine("hello")
	var done turn
	if msg := call(t, cs, "wait", map[string]any{"session": sessionID, "since": typed.UTC().Format(time.RFC3339Nano), "timeout_seconds": 60}, &done); msg != "" {
		t.Fatalf("wait: %s", msg)
	}
	if !done.Ended || done.Outcome != "done" || done.State != "finished" || done.Class != "" {
		t.Fatalf("wait = %+v, want the continued turn done", done)
	}
	var got struct {
		Turn     struct{ Attempts int }
		Timeline struct {
			Attempts []struct{ Status, Backend string }
		}
	}
	if msg := call(t, cs, "get_session", map[string]any{"session": sessionID}, &got); msg != "" {
		t.Fatal(msg)
	}
	if got.Turn.Attempts != 0 || len(got.Timeline.Attempts) != 1 || got.Timeline.Attempts[0].Backend != "screen" || got.Timeline.Attempts[0].Status != "sent" {
		t.Errorf("get_session = %+v, want one continuation sent through screen (and none since the completed turn)", got)
	}
	received, _ := os.ReadFile(filepath.Join(w.dir, "received.log"))
	if lines := strings.Split(strings.TrimSpace(string(received)), "\n"); len(lines) != 2 || lines[0] != "hello" {
		t.Errorf("the stand-in received %q, want hello and one continuation", lines)
	}
}

func TestTogglesOnlyWhenAllowed(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	plain := w.connect()
	_, err := plain.CallTool(context.Background(), &sdk.CallToolParams{Name: "set_toggles", Arguments: map[string]any{"paused": true}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("set_toggles without --allow-toggles: %v, want an unknown tool", err)
	}
	cs := w.connect("--allow-toggles")
	var set struct {
		RetryEnabled bool `json:"retry_enabled"`
		Paused       bool
	}
	if msg := call(t, cs, "set_toggles", map[string]any{"paused": true}, &set); msg != "" {
		t.Fatalf("set_toggles: %s", msg)
	}
	if !set.Paused || !set.RetryEnabled {
		t.Errorf("set_toggles(paused) = %+v", set)
	}
	out, err := daemontest.CLI(w.env, "status", "--json")
	if err != nil || !strings.Contains(string(out), `"paused": true`) {
		t.Errorf("nudge status after set_toggles: %s %v", out, err)
	}
}

// TestDataFolderOthersCanChangeIsRefused: a data folder others can write
// to is not read; the tools say which folder and what to do.
func TestDataFolderOthersCanChangeIsRefused(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	if _, err := daemontest.CLI(w.env, "quit"); err != nil {
		t.Fatal(err)
	}
	w.daemon.Exit(t)
	data := filepath.Join(w.dir, "data")
	if err := os.Chmod(data, 0o777); err != nil {
		t.Fatal(err)
	}
	cs := w.connect()
	var got any
	if msg := call(t, cs, "list_inbox", map[string]any{}, &got); !strings.Contains(msg, "data folder "+data) || !strings.Contains(msg, "chmod 700") {
		t.Fatalf("list_inbox in a folder others can change: %q, %v", msg, got)
	}
}
