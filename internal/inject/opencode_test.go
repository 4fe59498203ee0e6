//go:build linux

package inject

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"nudge/internal/watch/opencode/opencodetest"
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

// openCodeStandIn runs an OpenCode process serving fake, with password in its
// environment when set, and returns where OpenCode would type for ses_a.
func openCodeStandIn(t *testing.T, fake http.Handler, password string) (Where, *opencodetest.Server) {
	t.Helper()
	env := []string{"HOME=" + t.TempDir()}
	if password != "" {
		env = append(env, "OPENCODE_SERVER_PASSWORD="+password)
	}
	srv := opencodetest.Start(t, fake, env, "serve", "--port", "0")
	w, err := NewOpenCode().Locate(context.Background(), Target{Agent: "opencode", PID: srv.Cmd.Process.Pid, Session: "ses_a"})
	if err != nil {
		t.Fatal(err)
	}
	return w, srv
}

func TestOpenCodeSend(t *testing.T) {
	fake := &fakeOpenCode{status: "{}", permission: "[]"}
	w, _ := openCodeStandIn(t, fake, "")
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
	reused := w
	reused.Started = "1"
	if err := o.Send(context.Background(), reused, "x"); !errors.Is(err, ErrOtherProcess) || len(fake.took()) != 0 {
		t.Errorf("reused pid: %v", err)
	}
	moved := w
	moved.Server = "http://127.0.0.1:1"
	if err := o.Send(context.Background(), moved, "x"); !errors.Is(err, ErrOtherProcess) || len(fake.took()) != 0 {
		t.Errorf("a server no longer where it was located: %v", err)
	}
}

// A server with a password is sent its own password, from its process's
// environment, on every request.
func TestOpenCodeSendWithPassword(t *testing.T) {
	fake := &fakeOpenCode{status: "{}", permission: "[]"}
	var creds []string
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		creds = append(creds, user+":"+pass)
		if pass != "pa55" {
			rw.WriteHeader(http.StatusUnauthorized)
			return
		}
		fake.ServeHTTP(rw, r)
	})
	w, _ := openCodeStandIn(t, h, "pa55")
	if err := NewOpenCode().Send(context.Background(), w, "go on"); err != nil {
		t.Fatal(err)
	}
	if len(creds) != 4 || strings.Join(slices.Compact(creds), ",") != "opencode:pa55" {
		t.Errorf("credentials per request: %q", creds)
	}
	if got := fake.took(); len(got) != 4 || !strings.HasPrefix(got[3], "POST /session/ses_a/prompt_async") {
		t.Errorf("requests: %q", got)
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
	w, srv := openCodeStandIn(t, http.NotFoundHandler(), "")
	if w.Server != "http://"+srv.Addr || w.Pane != "ses_a" || w.PID != srv.Cmd.Process.Pid || w.Started == "" {
		t.Errorf("located %+v, want %s", w, srv.Addr)
	}
	// A TUI without a port has no server, even holding a socket.
	tui := opencodetest.Start(t, http.NotFoundHandler(), []string{"HOME=/h"}, "--continue")
	if _, err := o.Locate(context.Background(), Target{Agent: "opencode", PID: tui.Cmd.Process.Pid, Session: "ses_a"}); !errors.Is(err, ErrNotInTerminal) {
		t.Errorf("a TUI without a port located: %v", err)
	}
}
