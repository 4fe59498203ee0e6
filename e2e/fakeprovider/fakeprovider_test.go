package fakeprovider

import (
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// echo is a protocol that answers every request with its scenario mode.
var echo = API{Name: "echo", Modes: []string{ModeOK, "500"}, BasePath: "/v1", Serve: func(s *Server, w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []Message `json:"messages"`
	}
	DecodeBody(r, &body)
	rec := NewRequest(r, "req_")
	rec.Mode, rec.Status, rec.LastUserText = "side", http.StatusOK, LastUserText(body.Messages, "text")
	if r.URL.Path == "/v1/main" {
		rec.Mode = s.Next()
	}
	WriteJSON(w, rec.Status, map[string]string{"mode": rec.Mode})
	s.Record(rec)
}}

func TestQueueRecordAndLog(t *testing.T) {
	modes, err := echo.ParseScenario(" 500, ,ok")
	if err != nil || !reflect.DeepEqual(modes, []string{"500", "ok"}) {
		t.Fatalf("ParseScenario = %q, %v", modes, err)
	}
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	srv, err := New(echo, modes[:1], logPath)
	if err != nil {
		t.Fatal(err)
	}
	base, stop, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/v1") {
		t.Fatalf("base URL %q", base)
	}
	if err := srv.Push("ok"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/side", "/main", "/main", "/main"} {
		body := `{"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"text","text":" hello "}]}]}`
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	stop()
	stop() // a second stop is harmless

	var got []string
	for _, r := range srv.Main() {
		got = append(got, r.Mode)
	}
	if strings.Join(got, ",") != "500,ok,ok" {
		t.Fatalf("main-loop modes %v, want the queue then ok", got)
	}
	logged, err := ReadLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if mem := srv.Requests(); len(logged) != 4 || !reflect.DeepEqual(logged, mem) ||
		logged[0].Mode != "side" || logged[1].LastUserText != "hello" || !strings.HasPrefix(logged[1].RequestID, "req_") {
		t.Fatalf("log file %+v\nmemory %+v", logged, mem)
	}
}

func TestRejectsBadScenarioAndAddress(t *testing.T) {
	if _, err := echo.ParseScenario("500,teapot"); err == nil {
		t.Fatal("unknown mode accepted")
	}
	if _, err := New(echo, []string{"teapot"}, ""); err == nil {
		t.Fatal("New accepted an unknown mode")
	}
	srv, err := New(echo, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Push("nope"); err == nil {
		t.Fatal("Push accepted an unknown mode")
	}
	if _, _, err := srv.Listen("0.0.0.0:0"); err == nil {
		t.Fatal("non-loopback address accepted")
	}
}

func TestTruncateKeepsRunes(t *testing.T) {
	if got := truncate("aé", 2); got != "a" {
		t.Fatalf("truncate = %q", got)
	}
}
