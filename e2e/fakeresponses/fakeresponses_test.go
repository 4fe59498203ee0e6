package fakeresponses

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const prompt = `{"stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}]}`

func TestScenarioQueue(t *testing.T) {
	srv, err := New([]string{"500", ModeUsageLimit, "401"}, "")
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	// The title request never eats the scenario.
	title := post(t, url, `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Generate a concise, single-line task title for this"}]}]}`)
	if title.StatusCode != http.StatusOK {
		t.Errorf("title request: %d", title.StatusCode)
	}
	if r := post(t, url, prompt); r.StatusCode != http.StatusInternalServerError || r.Header.Get("x-request-id") == "" {
		t.Errorf("first: %d %v", r.StatusCode, r.Header)
	}
	limit := post(t, url, prompt)
	if limit.StatusCode != http.StatusTooManyRequests || limit.Header.Get("x-codex-primary-used-percent") != "100.0" ||
		limit.Header.Get("x-codex-primary-reset-at") != strconv.FormatInt(srv.ResetAt().Unix(), 10) {
		t.Errorf("usage limit: %d %v", limit.StatusCode, limit.Header)
	}
	if body, _ := io.ReadAll(limit.Body); !strings.Contains(string(body), `"usage_limit_reached"`) {
		t.Errorf("usage limit body: %s", body)
	}
	if r := post(t, url, prompt); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("third: %d", r.StatusCode)
	}
	ok := post(t, url, prompt)
	body, _ := io.ReadAll(ok.Body)
	if ok.StatusCode != http.StatusOK || !strings.Contains(string(body), "event: response.completed") || !strings.Contains(string(body), ReplyText) {
		t.Errorf("after the queue: %d %s", ok.StatusCode, body)
	}
	main := srv.Main()
	if len(main) != 4 || main[0].Mode != "500" || main[3].Mode != ModeOK || main[3].LastUserText != "hello" || main[1].Status != http.StatusTooManyRequests {
		t.Errorf("main requests = %+v", main)
	}
	if _, err := ParseScenario("ok,nope"); err == nil {
		t.Error("unknown mode accepted")
	}
}
