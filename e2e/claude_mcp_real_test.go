//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"nudge/e2e/fakeanthropic"
)

// The parent and the child session of the MCP test.
const (
	parentSession = "22222222-2222-4222-8222-222222222222"
	childSession  = "33333333-3333-4333-8333-333333333333"
)

// TestRealClaudeAsksNudgeAboutItsChild runs the real Claude Code CLI in
// print mode as a parent agent with `nudge mcp` as its MCP server. The fake
// Messages API has it call wait on a child session before the child
// exists; the test then runs the child (another real Claude Code in print
// mode) into a 400 the provider rejects, and checks what the parent got
// back: wait returned when the child's turn ended, failed, with the class
// and the original error text, and get_session shows the same with the
// child's timeline.
func TestRealClaudeAsksNudgeAboutItsChild(t *testing.T) {
	claude := claudeCLI.need(t)
	w := newClaudeWorld(t)
	srv, baseURL := serveFake(w, fakeanthropic.New, []string{
		fakeanthropic.ToolUse("mcp__nudge__wait", map[string]any{"session": childSession, "timeout_seconds": 120}),
		"400", // the child's turn
		fakeanthropic.ToolUse("mcp__nudge__get_session", map[string]any{"session": childSession[:8]}),
		"ok",
	})
	d := w.startDaemon()

	config := w.path("mcp.json")
	w.writeJSON(config, map[string]any{"mcpServers": map[string]any{"nudge": map[string]any{
		"type": "stdio", "command": w.nudge, "args": []string{"mcp"},
		"env": map[string]string{"NUDGE_CONFIG": w.path("nudge.yaml"), "NUDGE_DATA_DIR": w.path("data")},
	}}})
	parent := w.claudePrint(claude, baseURL, "parent", parentSession, "Check on my child session and tell me how it ended.",
		"--mcp-config", config, "--strict-mcp-config", "--allowedTools", "mcp__nudge__wait,mcp__nudge__get_session")

	waitFor(t, "the parent's call of wait to reach nudge", 60*time.Second, func() (bool, string) {
		log, _ := os.ReadFile(w.path("nudge.log"))
		return len(srv.Main()) >= 1 && strings.Contains(string(log), "change stream opened"), string(log)
	})
	w.step("wait is following the daemon's changes")
	select {
	case <-parent:
		t.Fatal("the parent finished before its child started")
	default:
	}

	child := w.claudePrint(claude, baseURL, "child", childSession, "Write the report.")
	waitDone(t, "the child", child)
	w.step("child exited")
	waitDone(t, "the parent", parent)
	w.step("parent exited")

	main := srv.Main()
	if len(main) != 4 || main[1].Status != 400 {
		t.Fatalf("main-loop requests: %+v, want wait, the child's 400, get_session, ok", main)
	}
	var waited struct {
		Session, State, Outcome, Class string
		Ended                          bool
		ErrorText                      string `json:"error_text"`
	}
	if err := json.Unmarshal([]byte(main[2].ToolResult), &waited); err != nil {
		t.Fatalf("the parent got back from wait %q: %v", main[2].ToolResult, err)
	}
	if waited.Session != childSession || !waited.Ended || waited.Outcome != "failed" || waited.State != "failed" ||
		waited.Class != "rejected" || !strings.Contains(strings.ToLower(waited.ErrorText), "prompt is too long") {
		t.Errorf("wait told the parent %+v, want the child's turn failed (rejected) with the provider's text", waited)
	}
	var got struct {
		Turn struct {
			Outcome, Class string
			ErrorText      string `json:"error_text"`
		}
		Timeline struct {
			Session string
			Events  []struct{ Kind, Class, Message string }
		}
	}
	if err := json.Unmarshal([]byte(main[3].ToolResult), &got); err != nil {
		t.Fatalf("the parent got back from get_session %q: %v", main[3].ToolResult, err)
	}
	failed := false
	for _, e := range got.Timeline.Events {
		failed = failed || e.Kind == "turn_failed" && e.Class == "rejected" && e.Message == waited.ErrorText
	}
	if got.Turn.Outcome != "failed" || got.Turn.Class != "rejected" || got.Timeline.Session != childSession || !failed {
		t.Errorf("get_session told the parent %s", main[3].ToolResult)
	}
	t.Logf("nudge explain --json %s: %s", childSession, d.cli("explain", childSession, "--json"))
}

// claudePrint runs `claude -p PROMPT` as session id in the project folder
// against the fake at baseURL; the returned channel closes when it exits.
func (w *world) claudePrint(claude, baseURL, name, id, prompt string, args ...string) <-chan struct{} {
	w.t.Helper()
	cmd := exec.Command(claude, append([]string{"-p", prompt, "--session-id", id}, args...)...)
	cmd.Dir = w.project
	cmd.Env = w.claudeEnv(baseURL)
	return w.startProcess("claude "+name, cmd, "claude-"+name+".out", nil)
}

// waitDone waits up to two minutes for a process started by startProcess.
func waitDone(t *testing.T, what string, exited <-chan struct{}) {
	t.Helper()
	select {
	case <-exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not finish within 2 minutes", what)
	}
}
