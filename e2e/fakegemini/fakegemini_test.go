package fakegemini

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const mainRequest = `{"contents":[{"role":"user","parts":[{"text":"ctx"}]},{"role":"user","parts":[{"text":"say hello"}]}],` +
	`"tools":[{"functionDeclarations":[{"name":"ls"}]}]}`

func start(t *testing.T, scenario string) (*Server, string) {
	t.Helper()
	modes, err := ParseScenario(scenario)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(modes, "")
	if err != nil {
		t.Fatal(err)
	}
	base, stop, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return srv, base
}

func post(t *testing.T, url, body string) (*http.Response, string, error) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

const stream = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"

// TestScenario: main-loop requests play the scenario in order, side calls
// do not eat it, and each answer has the Gemini API's shape.
func TestScenario(t *testing.T) {
	srv, base := start(t, "429-quota,stream-503,401,drop")

	resp, body, err := post(t, base+"/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[{"role":"user","parts":[{"text":"title?"}]}]}`)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(body, `"finishReason":"STOP"`) {
		t.Fatalf("side call: %v %v %s", resp, err, body)
	}

	resp, body, err = post(t, base+stream, mainRequest)
	var e struct {
		Error struct {
			Code    int
			Status  string
			Details []map[string]any
		}
	}
	if err != nil || resp.StatusCode != 429 || json.Unmarshal([]byte(body), &e) != nil || e.Error.Status != "RESOURCE_EXHAUSTED" || len(e.Error.Details) != 3 {
		t.Fatalf("429-quota: %v %v %s", resp, err, body)
	}

	resp, body, err = post(t, base+stream, mainRequest)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(body, `{"error":{"code":503,`) {
		t.Fatalf("stream-503: %v %v %s", resp, err, body)
	}

	resp, body, err = post(t, base+stream, mainRequest)
	if err != nil || resp.StatusCode != 401 || !strings.Contains(body, `"UNAUTHENTICATED"`) {
		t.Fatalf("401: %v %v %s", resp, err, body)
	}

	if _, _, err = post(t, base+stream, mainRequest); err == nil {
		t.Fatalf("drop: the connection was answered")
	}

	resp, body, err = post(t, base+stream, mainRequest)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(body, "data: ") || !strings.Contains(body, ReplyText) {
		t.Fatalf("after the scenario: %v %v %s", resp, err, body)
	}

	if err := srv.Push(ModeToolShell); err != nil {
		t.Fatal(err)
	}
	resp, body, err = post(t, base+stream, mainRequest)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(body, `"functionCall":{"args":{"command":"echo hi"`) {
		t.Fatalf("tool-shell: %v %v %s", resp, err, body)
	}

	// The dropped request is logged by its handler after the client saw
	// the close, so maybe after later ones: it is waited for, and the
	// order is checked without it.
	var main []Request
	for range 500 {
		if main = srv.Main(); len(main) == 6 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var modes []string
	for _, r := range main {
		if r.Mode != ModeDrop {
			modes = append(modes, r.Mode)
		}
		if r.LastUserText != "say hello" || r.Tools != 1 {
			t.Errorf("request %+v: last user text or tools not read", r)
		}
	}
	if got := strings.Join(modes, ","); len(main) != 6 || got != "429-quota,stream-503,401,ok,tool-shell" {
		t.Errorf("main-loop modes %s of %d requests, want the scenario and a drop", got, len(main))
	}
	if _, err := ParseScenario("500,teapot"); err == nil {
		t.Error("an unknown mode was accepted")
	}
}
