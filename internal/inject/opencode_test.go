//go:build linux

package inject

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeOpenCode stands in for an OpenCode server's API and records every request.
type fakeOpenCode struct {
	mu         sync.Mutex
	status     string
	permission string
	requests   []string // "METHOD path body"
}

func (f *fakeOpenCode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
	switch {
	case r.Method == "GET" && r.URL.Path == "/session/status":
		io.WriteString(w, f.status)
	case r.Method == "GET" && r.URL.Path == "/permission":
		io.WriteString(w, f.permission)
	case r.Method == "GET" && r.URL.Path == "/question":
		io.WriteString(w, "[]")
	case r.Method == "POST" && r.URL.Path == "/session/ses_a/prompt_async" && r.Header.Get("Content-Type") == "application/json":
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeOpenCode) took() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.requests
	f.requests = nil
	return out
}

func TestOpenCodeSend(t *testing.T) {
	fake := &fakeOpenCode{status: "{}", permission: "[]"}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server not on loopback: %s", srv.URL)
	}
	self, err := readProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	w := Where{Server: srv.URL, Pane: "ses_a", PID: os.Getpid(), Started: self.Started}
	o := NewOpenCode()
	text := "continue; $(rm -rf /) `x` \"quoted\"\nnext line"
	if err := o.Send(context.Background(), w, text); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /session/status",
		"GET /permission",
		"GET /question",
		`POST /session/ses_a/prompt_async {"parts":[{"text":"continue; $(rm -rf /) ` + "`x`" + ` \"quoted\"\nnext line","type":"text"}]}`,
	}
	if got := fake.took(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	for _, c := range []struct{ status, permission, why string }{
		{`{"ses_a":{"type":"busy"}}`, "[]", "busy"},
		{`{"ses_a":{"type":"retry","attempt":1,"message":"x","next":1}}`, "[]", "retry"},
		{"{}", `[{"id":"per_1","sessionID":"ses_a","permission":"bash"}]`, "permission prompt is open"},
	} {
		fake.status, fake.permission = c.status, c.permission
		err := o.Send(context.Background(), w, "x")
		if !errors.Is(err, ErrNotIdle) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s %s: err %v, want not idle (%s)", c.status, c.permission, err, c.why)
		}
		for _, r := range fake.took() {
			if strings.HasPrefix(r, "POST") {
				t.Errorf("posted while %s: %s", c.why, r)
			}
		}
	}
	// Another session's prompt does not block this one.
	fake.status, fake.permission = `{"ses_b":{"type":"busy"}}`, `[{"id":"per_2","sessionID":"ses_b"}]`
	if err := o.Send(context.Background(), w, "x"); err != nil {
		t.Errorf("other session busy: %v", err)
	}
	fake.took()
	w.Started = "1"
	if err := o.Send(context.Background(), w, "x"); !errors.Is(err, ErrOtherProcess) || len(fake.took()) != 0 {
		t.Errorf("reused pid: %v", err)
	}
}

func TestOpenCodeLocate(t *testing.T) {
	o := NewOpenCode()
	if _, err := o.Locate(context.Background(), Target{Agent: "claude", PID: os.Getpid(), Session: "x"}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("claude session located: %v", err)
	}
	if _, err := o.Locate(context.Background(), Target{Agent: "opencode", PID: os.Getpid(), Session: "ses_a"}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("a process without a server located: %v", err)
	}
	tail, err := exec.LookPath("tail")
	if err != nil {
		t.Skip("no tail(1) to stand in for an OpenCode process")
	}
	exe := filepath.Join(t.TempDir(), "opencode")
	if err := os.Symlink(tail, exe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-F", "--", os.DevNull, "serve", "--hostname", "127.0.0.1", "--port", "4311")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	execed(cmd.Process.Pid)
	w, err := o.Locate(context.Background(), Target{Agent: "opencode", PID: cmd.Process.Pid, Session: "ses_a"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Server != "http://127.0.0.1:4311" || w.Pane != "ses_a" || w.PID != cmd.Process.Pid || w.Started == "" {
		t.Errorf("located %+v", w)
	}
}
