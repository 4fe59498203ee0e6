package fakechat

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
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

const toolRequest = `{"model":"fake-model","stream":true,"tools":[{"type":"function","function":{"name":"Bash"}}],` +
	`"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"reminder"},{"type":"text","text":"hello"}]}]}`

func start(t *testing.T, scenario string, logPath string) (*Server, string, func()) {
	t.Helper()
	modes, err := ParseScenario(scenario)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(modes, logPath)
	if err != nil {
		t.Fatal(err)
	}
	base, stop, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return srv, base, stop
}

type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func decodeError(t *testing.T, resp *http.Response) errorBody {
	t.Helper()
	var e errorBody
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("error body: %v", err)
	}
	return e
}

func TestScenarioAppliesToToolRequestsOnly(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	_, base, stop := start(t, "500, 429-rate,ok", logPath)

	side := post(t, base+"/v1/chat/completions", `{"model":"m","stream":false,"messages":[{"role":"user","content":"title?"}]}`)
	var plain struct {
		Object  string `json:"object"`
		Choices []struct {
			Message      struct{ Role, Content string } `json:"message"`
			FinishReason string                         `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(side.Body).Decode(&plain); err != nil || side.StatusCode != 200 ||
		plain.Object != "chat.completion" || len(plain.Choices) != 1 || plain.Choices[0].Message.Content != ReplyText {
		t.Fatalf("side request: %d %+v %v", side.StatusCode, plain, err)
	}

	first := post(t, base+"/ok/v1/chat/completions", toolRequest)
	if e := decodeError(t, first); first.StatusCode != 500 || e.Error.Type != "server_error" ||
		!strings.HasPrefix(first.Header.Get("x-request-id"), "req-fake-") {
		t.Fatalf("first tool request: %d %+v %q", first.StatusCode, e, first.Header.Get("x-request-id"))
	}
	second := post(t, base+"/v1/chat/completions", toolRequest)
	if second.StatusCode != 429 || second.Header.Get("Retry-After") != "1" {
		t.Fatalf("second tool request: %d retry-after %q", second.StatusCode, second.Header.Get("Retry-After"))
	}
	third := post(t, base+"/v1/chat/completions", toolRequest)
	if third.StatusCode != 200 || third.Header.Get("content-type") != "text/event-stream" {
		t.Fatalf("third tool request: %d %q", third.StatusCode, third.Header.Get("content-type"))
	}
	var text strings.Builder
	var finish string
	var sawUsage, done bool
	sc := bufio.NewScanner(third.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta        struct{ Content string } `json:"delta"`
				FinishReason *string                  `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				TotalTokens int `json:"total_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %q: %v", data, err)
		}
		text.WriteString(c.Choices[0].Delta.Content)
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
		sawUsage = sawUsage || c.Usage != nil && c.Usage.TotalTokens > 0
	}
	if text.String() != ReplyText || finish != "stop" || !sawUsage || !done {
		t.Fatalf("stream: text %q finish %q usage %v done %v", text.String(), finish, sawUsage, done)
	}
	models, err := http.Get(base + "/v1/models")
	if err != nil || models.StatusCode != 200 {
		t.Fatalf("models: %v %v", models, err)
	}
	models.Body.Close()
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
	if strings.Join(got, ",") != "side,500,429-rate,ok,models,not_found" {
		t.Fatalf("logged modes %v", got)
	}
	if r := reqs[1]; r.LastUserText != "hello" || r.LastRole != "user" || r.Tools != 1 || !r.Stream || r.Status != 500 {
		t.Fatalf("logged tool request %+v", r)
	}
}

func TestErrorBodies(t *testing.T) {
	srv, base, _ := start(t, "", "")
	for _, tc := range []struct {
		mode, errType, code, text string
		status                    int
	}{
		{"401", "invalid_authentication_error", "", "Invalid Authentication", 401},
		{"503", "engine_overloaded_error", "", "overloaded", 503},
		{"529", "overloaded_error", "", "Overloaded", 529},
		{"429-quota", "insufficient_quota", "insufficient_quota", "exceeded your current quota", 429},
		{"429-balance", "exceeded_current_quota_error", "", "insufficient balance", 429},
		{"400", "invalid_request_error", "", "context length", 400},
	} {
		if err := srv.Push(tc.mode); err != nil {
			t.Fatal(err)
		}
		resp := post(t, base+"/v1/chat/completions", toolRequest)
		e := decodeError(t, resp)
		code := ""
		if e.Error.Code != nil {
			code = *e.Error.Code
		}
		if resp.StatusCode != tc.status || e.Error.Type != tc.errType || code != tc.code || !strings.Contains(e.Error.Message, tc.text) {
			t.Errorf("%s: %d %+v code %q", tc.mode, resp.StatusCode, e, code)
		}
	}
}

func TestDropClosesWithoutAnswer(t *testing.T) {
	srv, base, _ := start(t, "drop", "")
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(toolRequest))
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("dropped request answered: %d %s", resp.StatusCode, b)
	}
	if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "reset") {
		t.Logf("dropped request error: %v", err)
	}
	// The server records the request once it has closed the connection,
	// which the client may see first.
	var reqs []Request
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if reqs = srv.Requests(); len(reqs) > 0 {
			break
		}
	}
	if len(reqs) == 0 || reqs[0].Mode != ModeDrop || reqs[0].Status != 0 {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestRejectsUnknownMode(t *testing.T) {
	if _, err := ParseScenario("500,teapot"); err == nil {
		t.Fatal("unknown mode accepted")
	}
	if _, err := New([]string{"teapot"}, ""); err == nil {
		t.Fatal("New accepted an unknown mode")
	}
	for _, m := range Modes() {
		if _, err := ParseScenario(m); err != nil {
			t.Errorf("listed mode %q refused: %v", m, err)
		}
	}
}
