package fakeanthropic

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

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
