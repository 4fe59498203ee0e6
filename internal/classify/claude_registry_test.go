package classify

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func ccSnapshot(status, waitingFor string, updatedAt int64) string {
	return `{"pid":555,"sessionId":"11111111-1111-4111-8111-111111111111","cwd":"/home/dev/project","kind":"interactive","entrypoint":"cli","tmux":"cc3:@3.%3","status":"` +
		status + `","waitingFor":"` + waitingFor + `","updatedAt":` + strconv.FormatInt(updatedAt, 10) + `}`
}

func TestClaudeRegistryTransitions(t *testing.T) {
	r := newClaudeReader(filepath.Join("home", ".claude", "sessions", "555.json"), nil)
	if _, whole := r.(WholeFile); !whole {
		t.Fatal("the registry reader does not read whole files")
	}
	read := func(content string) []Event { return r.Read([]byte(content)) }

	events := read(ccSnapshot("idle", "", 1796029000000))
	claudeSameKinds(t, events, AgentIdle)
	e := events[0]
	want := Process{PID: 555, Status: "idle", TmuxPane: "%3", Cwd: "/home/dev/project"}
	if e.Process == nil || *e.Process != want || e.Session != "11111111-1111-4111-8111-111111111111" || e.Project != "/home/dev/project" {
		t.Errorf("idle event = %+v %+v", e, e.Process)
	}
	if !e.Time.Equal(time.UnixMilli(1796029000000)) {
		t.Errorf("time = %v", e.Time)
	}

	// A rewrite that changes only the time says nothing new.
	claudeSameKinds(t, read(ccSnapshot("idle", "", 1796029001000)))
	claudeSameKinds(t, read(ccSnapshot("busy", "", 1796029002000)), AgentActivity)

	events = read(ccSnapshot("waiting", "permission prompt", 1796029003000))
	claudeSameKinds(t, events, BoxOpened)
	if events[0].Box != "permission prompt" || events[0].Process.Waiting != "permission prompt" {
		t.Errorf("box_opened = %+v", events[0])
	}
	// Another box replaces the first.
	events = read(ccSnapshot("waiting", "input needed", 1796029004000))
	claudeSameKinds(t, events, BoxClosed, BoxOpened)
	if events[0].Box != "permission prompt" || events[1].Box != "input needed" {
		t.Errorf("boxes = %q then %q", events[0].Box, events[1].Box)
	}
	events = read(ccSnapshot("busy", "", 1796029005000))
	claudeSameKinds(t, events, BoxClosed, AgentActivity)
	if events[0].Box != "input needed" || events[0].Process.Status != "busy" {
		t.Errorf("box_closed = %+v %+v", events[0], events[0].Process)
	}
	claudeSameKinds(t, read(ccSnapshot("waiting", "permission prompt", 1796029006000)), BoxOpened)

	// Removal while a box is open: the box is gone with the process.
	events = read("")
	claudeSameKinds(t, events, BoxClosed, AgentIdle)
	if p := events[1].Process; p == nil || p.PID != 555 || p.Status != "exited" || events[1].Session != "11111111-1111-4111-8111-111111111111" {
		t.Errorf("exit event = %+v %+v", events[1], p)
	}
	claudeSameKinds(t, read("  \n"))
	// A new process reusing the pid starts afresh.
	claudeSameKinds(t, read(ccSnapshot("busy", "", 1796029100000)), AgentActivity)
}

func TestClaudeRegistryEdges(t *testing.T) {
	r := newClaudeReader(filepath.Join("h", "sessions", "777.json"), nil)
	// Removal without any snapshot still names the pid from the file name.
	events := r.Read(nil)
	claudeSameKinds(t, events, AgentIdle)
	if p := events[0].Process; p.PID != 777 || p.Status != "exited" {
		t.Errorf("exit = %+v", p)
	}
	waiting := ccSnapshot("waiting", "input needed", 1796029000000)
	claudeSameKinds(t, r.Read([]byte(waiting)), BoxOpened)
	// Half-written or foreign content changes nothing: the box stays open.
	for _, bad := range []string{"{", waiting[:30], "[]", "null", `{"pid":"x","status":7}`} {
		claudeSameKinds(t, r.Read([]byte(bad)))
	}
	claudeSameKinds(t, r.Read([]byte(ccSnapshot("idle", "", 1796029001000))), BoxClosed, AgentIdle)
	// Extra fields are tolerated; a missing pid comes from the file name.
	events = newClaudeReader(filepath.Join("h", "sessions", "777.json"), nil).Read([]byte(`{"sessionId":"s","status":"idle","jobId":"j","agent":"x","tmux":"weird"}`))
	claudeSameKinds(t, events, AgentIdle)
	if p := events[0].Process; p.PID != 777 || p.TmuxPane != "" {
		t.Errorf("process = %+v", p)
	}
	for tmux, pane := range map[string]string{"cc3:@3.%3": "%3", "a.b:@12.%140": "%140", "%7": "%7", "": "", "s:@1.%x": ""} {
		if got := claudeTmuxPane(tmux); got != pane {
			t.Errorf("pane of %q = %q, want %q", tmux, got, pane)
		}
	}
}

func TestReadFileRegistrySnapshot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "555.json")
	// A snapshot is one record even when it spans several lines.
	if err := os.WriteFile(path, []byte("{\"pid\":555,\"sessionId\":\"s\",\n\"status\":\"waiting\",\"waitingFor\":\"input needed\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := readFile(path, claudeAgent(t))
	if err != nil {
		t.Fatal(err)
	}
	claudeSameKinds(t, events, BoxOpened)
	if events[0].Box != "input needed" {
		t.Errorf("box = %q", events[0].Box)
	}
}
