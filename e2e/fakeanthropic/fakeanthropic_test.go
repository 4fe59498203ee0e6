package fakeanthropic

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/fakeprovider"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const toolRequest = `{"model":"claude-opus-5-5","stream":true,"tools":[{"name":"Bash"}],` +
	`"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"hello"}]}]}`

func TestScenarioAppliesToToolRequestsOnly(t *testing.T) {
	modes, err := ParseScenario("500, 529,ok")
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	srv, err := New(modes, logPath)
	if err != nil {
		t.Fatal(err)
	}
	base, stop, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	side := post(t, base+"/v1/messages?beta=true", `{"model":"m","stream":false,"messages":[]}`)
	if side.StatusCode != 200 {
		t.Fatalf("side request: status %d, want 200", side.StatusCode)
	}
	first := post(t, base+"/v1/messages?beta=true", toolRequest)
	var errBody struct {
		Type  string `json:"type"`
		Error struct{ Type, Message string }
	}
	if err := json.NewDecoder(first.Body).Decode(&errBody); err != nil {
		t.Fatal(err)
	}
	if first.StatusCode != 500 || errBody.Type != "error" || errBody.Error.Type != "api_error" ||
		errBody.Error.Message != "Internal server error" || !strings.HasPrefix(first.Header.Get("request-id"), "req_") {
		t.Fatalf("first tool request: %d %+v request-id %q", first.StatusCode, errBody, first.Header.Get("request-id"))
	}
	if second := post(t, base+"/v1/messages", toolRequest); second.StatusCode != 529 {
		t.Fatalf("second tool request: status %d, want 529", second.StatusCode)
	}
	third := post(t, base+"/v1/messages", toolRequest)
	if third.StatusCode != 200 || third.Header.Get("content-type") != "text/event-stream" {
		t.Fatalf("third tool request: status %d content-type %q", third.StatusCode, third.Header.Get("content-type"))
	}
	var events []string
	sc := bufio.NewScanner(third.Body)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, name)
		}
	}
	want := "message_start content_block_start ping content_block_delta content_block_delta content_block_delta " +
		"content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(events, " "); got != want {
		t.Fatalf("SSE events:\n got %s\nwant %s", got, want)
	}
	count := post(t, base+"/v1/messages/count_tokens?beta=true", `{}`)
	var tokens struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(count.Body).Decode(&tokens); err != nil || tokens.InputTokens != 42 {
		t.Fatalf("count_tokens: %+v %v", tokens, err)
	}
	if nf := post(t, base+"/v1/other", `{}`); nf.StatusCode != 404 {
		t.Fatalf("other path: status %d, want 404", nf.StatusCode)
	}
	stop()

	reqs, err := fakeprovider.ReadLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range reqs {
		got = append(got, r.Mode)
	}
	if strings.Join(got, ",") != "side,500,529,ok,count_tokens,not_found" {
		t.Fatalf("logged modes %v", got)
	}
	if reqs[1].LastUserText != "hello" || reqs[1].Tools != 1 || !reqs[1].Stream || reqs[1].Status != 500 {
		t.Fatalf("logged tool request %+v", reqs[1])
	}
}

func TestRejectsUnknownMode(t *testing.T) {
	if _, err := ParseScenario("500,teapot"); err == nil {
		t.Fatal("unknown mode accepted")
	}
}

func TestToolUseAsksForACallAndRecordsItsResult(t *testing.T) {
	call := ToolUse("mcp__nudge__wait", map[string]any{"session": "abc", "timeout_seconds": 60})
	srv, err := New([]string{call, ModeOK}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New([]string{"tool_use {not json"}, ""); err == nil {
		t.Error("a malformed tool call was accepted as a mode")
	}
	base, stop, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	resp := post(t, base+"/v1/messages", toolRequest)
	var name, partial, stopReason string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string
			ContentBlock struct{ Type, Name string } `json:"content_block"`
			Delta        struct {
				Type        string
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			}
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case "content_block_start":
			name = ev.ContentBlock.Name
		case "content_block_delta":
			partial += ev.Delta.PartialJSON
		case "message_delta":
			stopReason = ev.Delta.StopReason
		}
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(partial), &input); err != nil || name != "mcp__nudge__wait" || input["session"] != "abc" || stopReason != "tool_use" {
		t.Fatalf("tool call: name %q input %s (%v) stop %q", name, partial, err, stopReason)
	}

	result := `{"model":"m","stream":true,"tools":[{"name":"x"}],"messages":[` +
		`{"role":"user","content":"hello"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"mcp__nudge__wait","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"{\"outcome\":\"failed\"}"}]}]}]}`
	if r := post(t, base+"/v1/messages", result); r.StatusCode != 200 {
		t.Fatalf("request with the tool result: %d", r.StatusCode)
	}
	// The request is recorded once its answer is written.
	main := srv.Main()
	for end := time.Now().Add(5 * time.Second); len(main) < 2 && time.Now().Before(end); main = srv.Main() {
		time.Sleep(10 * time.Millisecond)
	}
	if len(main) != 2 || main[0].Mode != call || main[1].Mode != ModeOK || main[1].ToolResult != `{"outcome":"failed"}` {
		t.Fatalf("main-loop requests: %+v", main)
	}
}
