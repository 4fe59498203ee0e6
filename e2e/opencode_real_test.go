//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"nudge/e2e/fakechat"
)

// openCodeCLI is the known-good OpenCode (docs/agents/opencode.md §1).
var openCodeCLI = agentCLI{name: "OpenCode", env: "NUDGE_E2E_OPENCODE", install: "opencode", version: "1.18.33",
	bin: filepath.Join("node_modules", ".bin", "opencode")}

// TestRealOpenCodeRecoversAfter5xx: OpenCode's own five retries of a 500
// are spent, the turn dies, and nudge continues the session through
// OpenCode's HTTP API; the turn then completes.
func TestRealOpenCodeRecoversAfter5xx(t *testing.T) {
	oc := startOpenCodeWorld(t, []string{"500", "500", "500", "500", "500", "500", "ok"})
	ses := oc.newSession("e2e 5xx")
	oc.prompt(ses, "hello")
	waitFor(t, "the dead turn, the continuation and a completed turn", 90*time.Second, func() (bool, string) {
		msgs := oc.messages(ses)
		return recoveredOpenCodeTurn(msgs) == "", "missing: " + recoveredOpenCodeTurn(msgs) + "\n" + describeOpenCode(msgs)
	})
	// A second continuation would come one retry delay (3s) later.
	time.Sleep(5 * time.Second)
	msgs := oc.messages(ses)
	if n := count(msgs, func(m openCodeMessage) bool { return m.Info.Role == "user" && m.text() == continuation }); n != 1 {
		t.Errorf("continuation sent %d times, want once\n%s", n, describeOpenCode(msgs))
	}
	if main := oc.fake.Main(); len(main) != 7 || main[5].Status != 500 || main[6].Status != 200 {
		t.Errorf("provider requests: want six 500s then a 200, got %+v", main)
	}
	t.Logf("nudge explain: %s", oc.d.cli("explain", ses, "--json"))
}

// TestRealOpenCodeAnyPortWithPassword: a server started with --port 0 (its
// port on no command line) and a password is found from its own listening
// socket, asked with the password of its own environment, and its dead
// turn continued.
func TestRealOpenCodeAnyPortWithPassword(t *testing.T) {
	oc := startOpenCodeWorldWith(t, []string{"500", "500", "500", "500", "500", "500", "ok"}, serveOptions{anyPort: true, password: "e2e-pa55"})
	resp, err := openCodeClient.Get(oc.server + "/session/status")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the server answers without its password: HTTP %d", resp.StatusCode)
	}
	ses := oc.newSession("e2e any port, password")
	oc.prompt(ses, "hello")
	waitFor(t, "the dead turn, the continuation and a completed turn", 90*time.Second, func() (bool, string) {
		msgs := oc.messages(ses)
		return recoveredOpenCodeTurn(msgs) == "", "missing: " + recoveredOpenCodeTurn(msgs) + "\n" + describeOpenCode(msgs)
	})
	if n := count(oc.messages(ses), func(m openCodeMessage) bool { return m.Info.Role == "user" && m.text() == continuation }); n != 1 {
		t.Errorf("continuation sent %d times, want once", n)
	}
}

// TestRealOpenCodeQuotaNotRetried: a quota answer kills the turn after
// OpenCode's own retries; nudge shows a usage limit and sends nothing.
func TestRealOpenCodeQuotaNotRetried(t *testing.T) {
	oc := startOpenCodeWorld(t, []string{"429-quota", "429-quota", "429-quota", "429-quota", "429-quota", "429-quota"})
	ses := oc.newSession("e2e quota")
	oc.prompt(ses, "hello")
	waitFor(t, "nudge to show the usage limit", 60*time.Second, func() (bool, string) {
		st := oc.d.cli("status", "--json")
		return strings.Contains(st, ses) && strings.Contains(st, "usage"), st + "\n" + describeOpenCode(oc.messages(ses))
	})
	time.Sleep(5 * time.Second) // longer than the first retry delay (2s)
	msgs := oc.messages(ses)
	if n := count(msgs, func(m openCodeMessage) bool { return m.Info.Role == "user" }); n != 1 {
		t.Errorf("a continuation was sent on a usage limit:\n%s", describeOpenCode(msgs))
	}
	if main := oc.fake.Main(); len(main) != 6 {
		t.Errorf("provider requests: want OpenCode's own 6, got %d", len(main))
	}
	inbox := oc.d.cli("inbox", "--json")
	if !strings.Contains(inbox, "exceeded your current quota") {
		t.Errorf("inbox lacks the quota error text: %s", inbox)
	}
}

// TestRealOpenCodeAuthToldOnce: a 401 is not retried by anyone and makes one
// Inbox entry.
func TestRealOpenCodeAuthToldOnce(t *testing.T) {
	oc := startOpenCodeWorld(t, []string{"401"})
	ses := oc.newSession("e2e auth")
	oc.prompt(ses, "hello")
	waitFor(t, "one Inbox entry for the sign-in failure", 60*time.Second, func() (bool, string) {
		inbox := oc.d.cli("inbox", "--json")
		return strings.Contains(inbox, ses) && strings.Contains(inbox, "Invalid Authentication"), inbox
	})
	time.Sleep(5 * time.Second)
	if n := strings.Count(oc.d.cli("inbox", "--json"), "Invalid Authentication"); n != 1 {
		t.Errorf("auth failure told %d times, want once: %s", n, oc.d.cli("inbox", "--json"))
	}
	if main := oc.fake.Main(); len(main) != 1 {
		t.Errorf("provider requests: want 1, got %+v", main)
	}
	if st := oc.d.cli("status", "--json"); !strings.Contains(st, "sign") {
		t.Errorf("status does not say the session needs sign-in: %s", st)
	}
}

// openCodeClient bounds every call: a server still starting may accept a
// connection and answer it late.
var openCodeClient = &http.Client{Timeout: 10 * time.Second}

// openCodeWorld is a world with a running `opencode serve`, the fake
// provider behind a proxy and the nudge daemon following the server.
type openCodeWorld struct {
	t        *testing.T
	w        *world
	d        *daemon
	server   string // http://127.0.0.1:PORT
	password string // the server's OPENCODE_SERVER_PASSWORD; "" for none
	fake     *fakechat.Server
}

// serveOptions are how `opencode serve` is started.
type serveOptions struct {
	anyPort  bool   // --port 0: OpenCode picks the port
	password string // OPENCODE_SERVER_PASSWORD
}

func startOpenCodeWorld(t *testing.T, scenario []string) *openCodeWorld {
	t.Helper()
	return startOpenCodeWorldWith(t, scenario, serveOptions{})
}

func startOpenCodeWorldWith(t *testing.T, scenario []string, o serveOptions) *openCodeWorld {
	t.Helper()
	exe := openCodeCLI.need(t)
	w := newWorld(t)
	fake, fakeURL := serveFake(w, fakechat.New, scenario)
	proxy := fastRetryProxy(t, fakeURL)
	oc := &openCodeWorld{t: t, w: w, d: w.startDaemon(), fake: fake, password: o.password}
	oc.startServe(exe, proxy, o)
	w.waitLog("nudge to follow the OpenCode event stream", "following OpenCode event stream")
	return oc
}

// fastRetryProxy passes requests to the fake provider and adds
// `retry-after-ms: 1` to its errors, so OpenCode's own five retries run
// back to back (docs/agents/opencode.md §9.5).
func fastRetryProxy(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{Proxy: nil}
	rp.ModifyResponse = func(r *http.Response) error {
		if r.StatusCode >= 400 {
			r.Header.Set("retry-after-ms", "1")
		}
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// startServe writes OpenCode's config (docs/agents/opencode.md §9.2) and runs
// `opencode serve` in the project folder, on a free loopback port or (with
// o.anyPort) one it picks, read from its output (§9.3).
func (oc *openCodeWorld) startServe(exe, provider string, o serveOptions) {
	t, w := oc.t, oc.w
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
		"model": "fake/fake-model", "small_model": "fake/fake-model",
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": provider + "/v1", "apiKey": "sk-fake"},
			"models":  map[string]any{"fake-model": map[string]any{"name": "Fake Model", "limit": map[string]any{"context": 100000, "output": 4096}}},
		}},
		"permission": map[string]any{"bash": "ask"}, "lsp": false, "formatter": false,
	}
	dir := filepath.Join(w.home, ".config", "opencode")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w.writeJSON(filepath.Join(dir, "opencode.json"), cfg)
	port := "0"
	if !o.anyPort {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
	}
	cmd := exec.Command(exe, "serve", "--hostname", "127.0.0.1", "--port", port)
	cmd.Dir = w.project
	cmd.Env = append(w.baseEnv(),
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1")
	if o.password != "" {
		cmd.Env = append(cmd.Env, "OPENCODE_SERVER_PASSWORD="+o.password)
	}
	w.dumpOnFailure("opencode log", filepath.Join(w.home, ".local", "share", "opencode", "log", "opencode.log"))
	exited := w.startProcess("opencode serve", cmd, "opencode.out", nil)
	oc.server = "http://127.0.0.1:" + port
	if o.anyPort {
		listening := regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)
		waitFor(t, "opencode serve to say where it listens", 60*time.Second, func() (bool, string) {
			out, _ := os.ReadFile(w.path("opencode.out"))
			m := listening.FindSubmatch(out)
			if m != nil {
				oc.server = string(m[1])
			}
			return m != nil, string(out)
		})
	}
	waitFor(t, "opencode serve to answer", 60*time.Second, func() (bool, string) {
		select {
		case <-exited:
			t.Fatalf("opencode serve exited during start-up")
		default:
		}
		req, _ := http.NewRequest("GET", oc.server+"/session/status", nil)
		oc.auth(req)
		resp, err := openCodeClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	})
}

// call sends one request to the OpenCode server and decodes its answer.
func (oc *openCodeWorld) call(method, path string, body any, want int, out any) {
	oc.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, oc.server+path, r)
	if err != nil {
		oc.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	oc.auth(req)
	resp, err := openCodeClient.Do(req)
	if err != nil {
		oc.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		oc.t.Fatalf("%s %s: HTTP %d, want %d: %s", method, path, resp.StatusCode, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			oc.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

// auth adds the server's password to req (basic auth, user "opencode").
func (oc *openCodeWorld) auth(req *http.Request) {
	if oc.password != "" {
		req.SetBasicAuth("opencode", oc.password)
	}
}

// newSession creates a titled session (no title request, §9.3).
func (oc *openCodeWorld) newSession(title string) string {
	var s struct {
		ID string `json:"id"`
	}
	oc.call("POST", "/session", map[string]string{"title": title}, 200, &s)
	return s.ID
}

func (oc *openCodeWorld) prompt(session, text string) {
	oc.call("POST", "/session/"+session+"/prompt_async", map[string]any{"parts": []map[string]string{{"type": "text", "text": text}}}, 204, nil)
}

// openCodeMessage is one entry of GET /session/{id}/message.
type openCodeMessage struct {
	Info struct {
		Role   string          `json:"role"`
		Finish string          `json:"finish"`
		Error  json.RawMessage `json:"error"`
		Time   struct {
			Completed int64 `json:"completed"`
		} `json:"time"`
	} `json:"info"`
	Parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"parts"`
}

func (m openCodeMessage) text() string {
	var s []string
	for _, p := range m.Parts {
		if p.Type == "text" {
			s = append(s, p.Text)
		}
	}
	return strings.Join(s, "")
}

func (oc *openCodeWorld) messages(session string) []openCodeMessage {
	var msgs []openCodeMessage
	oc.call("GET", "/session/"+session+"/message", nil, 200, &msgs)
	return msgs
}

// recoveredOpenCodeTurn checks for: hello, an assistant step with an error,
// nudge's continuation, an assistant step finished "stop".
func recoveredOpenCodeTurn(msgs []openCodeMessage) string {
	return firstMissing(msgs, []turnStep[openCodeMessage]{
		{"user hello", func(m openCodeMessage) bool { return m.Info.Role == "user" && m.text() == "hello" }},
		{"failed step", func(m openCodeMessage) bool { return m.Info.Role == "assistant" && len(m.Info.Error) > 0 }},
		{"continuation", func(m openCodeMessage) bool { return m.Info.Role == "user" && m.text() == continuation }},
		{"finished step", func(m openCodeMessage) bool {
			return m.Info.Role == "assistant" && m.Info.Finish == "stop" && m.Info.Time.Completed > 0
		}},
	})
}

func describeOpenCode(msgs []openCodeMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s finish=%q error=%.120s text=%.80q\n", m.Info.Role, m.Info.Finish, m.Info.Error, m.text())
	}
	return b.String()
}
