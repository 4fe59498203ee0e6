package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nudge/internal/inbox"
	"nudge/internal/status"
)

// daemonPicture stands in for the running daemon's status and toggles; the
// Inbox database under it is the real one. The real daemon is driven by
// e2e/browser.
type daemonPicture struct {
	mu      sync.Mutex
	st      status.Status
	changed chan struct{}
	used    atomic.Int64 // requests it was told of
	// continued are the providers ContinueAll was asked for.
	continued []string
}

func (p *daemonPicture) Status() status.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}

func (p *daemonPicture) Used() { p.used.Add(1) }

func (p *daemonPicture) ContinueAll(provider string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.continued = append(p.continued, provider)
	return 2, nil
}

func (p *daemonPicture) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

func (p *daemonPicture) Change(ch status.SettingsChange) (status.Settings, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	set := *p.st.Settings
	if ch.RetryEnabled != nil {
		set.RetryEnabled = *ch.RetryEnabled
	}
	if ch.ContinueAfterUsageLimit != nil {
		set.ContinueAfterUsageLimit = *ch.ContinueAfterUsageLimit
	}
	if ch.Paused != nil {
		set.Paused = *ch.Paused
	}
	p.st.Settings = &set
	close(p.changed)
	p.changed = make(chan struct{})
	return set, nil
}

type fixture struct {
	t      *testing.T
	srv    *Server
	db     *inbox.DB
	daemon *daemonPicture
	secret string
	dir    string
}

func serve(t *testing.T) *fixture { return serveLimited(t, defaultLimits) }

func serveLimited(t *testing.T, lim limits) *fixture {
	t.Helper()
	dir := t.TempDir()
	db, err := inbox.Open(filepath.Join(dir, "nudge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d := &daemonPicture{changed: make(chan struct{}), st: status.Status{
		Daemon:   &status.Daemon{PID: 42, Version: "test", Ready: true},
		Settings: &status.Settings{RetryEnabled: true},
		Sessions: []status.Session{
			{Agent: "kimi", Session: "4f2c9a1e-0000-4000-8000-000000000001", Project: "/home/p/app", State: "failed"},
			{Agent: "claude", Session: "4f2c9a1e-0000-4000-8000-000000000002", Project: "/home/p/web", State: "retrying"},
		},
	}}
	srv, err := start(context.Background(), Options{Addr: "127.0.0.1:0", Daemon: d, Inbox: db, Log: slog.New(slog.DiscardHandler)}, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return &fixture{t: t, srv: srv, db: db, daemon: d, secret: srv.secret, dir: dir}
}

func (f *fixture) seed(errorText string) {
	f.t.Helper()
	err := f.db.Commit(context.Background(), inbox.Batch{Entries: []inbox.EntryRow{{
		Time: time.Now(), Agent: "claude", Session: "s1", Project: "/p", What: "the turn failed with a provider error; retry is off",
		ErrorText: errorText, Class: "provider_error", Code: "500",
	}}})
	if err != nil {
		f.t.Fatal(err)
	}
}

// request sends method path with the given headers; "Authorization" set to
// "" means none. Host, if given, replaces the listener's own.
func (f *fixture) request(method, path string, headers map[string]string, body string) *http.Response {
	f.t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(f.srv.URL(), "/")+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.secret)
	for k, v := range headers {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (f *fixture) expect(resp *http.Response, code int) string {
	f.t.Helper()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != code {
		f.t.Fatalf("%s %s: got %s, want %d: %s", resp.Request.Method, resp.Request.URL.Path, resp.Status, code, b)
	}
	return string(b)
}

func TestRefusesNonLoopbackAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.168.1.10:0", "example.com:80", "[::]:0", "127.0.0.1"} {
		_, err := Start(context.Background(), Options{Addr: addr, Log: slog.New(slog.DiscardHandler)})
		if err == nil {
			t.Errorf("web.addr %q was accepted", addr)
			continue
		}
		if !strings.Contains(err.Error(), addr) {
			t.Errorf("web.addr %q: the error does not name it: %v", addr, err)
		}
	}
	srv, err := Start(context.Background(), Options{Addr: "localhost:0", Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("localhost refused: %v", err)
	}
	defer srv.Stop()
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Errorf("localhost bound %s", srv.URL())
	}
}

// A web.addr whose port another program holds does not keep nudge from
// running: the window listens on a free port of the same host, and the log
// says where.
func TestTakenPortIsReplacedByAFreeOne(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var log bytes.Buffer
	srv, err := Start(context.Background(), Options{Addr: held.Addr().String(), Daemon: &daemonPicture{}, Log: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatalf("web.addr %s, held by another program: %v", held.Addr(), err)
	}
	defer srv.Stop()
	if srv.URL() == "http://"+held.Addr().String()+"/" || !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("listening at %s; want another port of 127.0.0.1", srv.URL())
	}
	resp, err := http.Get(srv.URL() + "api/status")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET %sapi/status without a credential: %s, want the window's own 401", srv.URL(), resp.Status)
	}
	if !strings.Contains(log.String(), "port is taken") || !strings.Contains(log.String(), srv.URL()) {
		t.Errorf("log does not say the port was taken and where the window is:\n%s", log.String())
	}
}

func TestSecretIsRequired(t *testing.T) {
	f := serve(t)
	for name, h := range map[string]map[string]string{
		"none":         {"Authorization": ""},
		"wrong bearer": {"Authorization": "Bearer " + strings.Repeat("0", 64)},
		"basic":        {"Authorization": "Basic " + f.secret},
		// Browsers send cookies to every port of 127.0.0.1: a cookie is
		// never a credential here, not even one holding the secret.
		"secret as cookie": {"Authorization": "", "Cookie": "nudge_inbox=" + f.secret},
		// A sign-in link is traded once on POST /api/page, nothing else.
		"launch token as bearer": {"Authorization": "Bearer " + launchToken(t, f.srv.LaunchURL())},
		"secret as launch":       {"Authorization": "Launch " + f.secret},
	} {
		for _, path := range []string{"/api/status", "/api/entries", "/api/events", "/api/sessions/x", "/api/sessions/x/timeline", "/nope"} {
			if resp := f.request("GET", path, h, ""); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: GET %s: %s, want 401", name, path, resp.Status)
			}
		}
		for _, path := range []string{"/api/entries/read-all", "/api/events/ticket", "/api/page", "/api/settings"} {
			if resp := f.request("POST", path, h, ""); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: POST %s: %s, want 401", name, path, resp.Status)
			}
		}
	}

	// With the bearer secret, the API answers with the daemon's status as
	// is, judged at a glance as the menu-bar icon judges it.
	var got windowStatus
	if err := json.Unmarshal([]byte(f.expect(f.request("GET", "/api/status", nil, ""), 200)), &got); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(f.daemon.Status())
	if b, _ := json.Marshal(got.Status); string(b) != string(want) || got.Overall != status.Retrying || got.OverallWords != "retrying" {
		t.Errorf("status: got %s, %q (%q); want %s, retrying", b, got.Overall, got.OverallWords, want)
	}
	f.seed("unread")
	if err := json.Unmarshal([]byte(f.expect(f.request("GET", "/api/status", nil, ""), 200)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Overall != status.NeedsAttention || got.OverallWords != "needs attention" {
		t.Errorf("status with an unread entry: %q (%q), want needs attention", got.Overall, got.OverallWords)
	}
}

// launchToken is the one-time token of a sign-in link.
func launchToken(t *testing.T, link string) string {
	t.Helper()
	_, token, ok := strings.Cut(link, "#launch=")
	if !ok || len(token) != 64 {
		t.Fatalf("sign-in link %q", link)
	}
	return token
}

// signIn trades a sign-in link for a page token, as the page does.
func (f *fixture) signIn(link string) (string, *http.Response) {
	f.t.Helper()
	resp := f.request("POST", "/api/page", map[string]string{"Authorization": "Launch " + launchToken(f.t, link)}, "")
	if resp.StatusCode != 200 {
		return "", resp
	}
	var got struct{ Token string }
	must(f.t, json.NewDecoder(resp.Body).Decode(&got))
	return got.Token, resp
}

func TestSignInLinkIsGoodOnce(t *testing.T) {
	f := serve(t)
	link := f.srv.LaunchURL()
	if !strings.HasPrefix(link, f.srv.URL()+"#launch=") || strings.Contains(link, f.secret) {
		t.Fatalf("sign-in link %q", link)
	}
	page, resp := f.signIn(link)
	if page == "" || page == f.secret || page == launchToken(t, link) {
		t.Fatalf("page token %q (%s)", page, resp.Status)
	}
	if _, resp := f.signIn(link); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a used sign-in link: %s, want 401", resp.Status)
	}
	// The page token opens the API, as a header only.
	f.expect(f.request("GET", "/api/entries", map[string]string{"Authorization": "Bearer " + page}, ""), 200)
	f.expect(f.request("GET", "/api/entries?token="+page, map[string]string{"Authorization": ""}, ""), http.StatusUnauthorized)
	// Two page loads, two tokens.
	if other, _ := f.signIn(f.srv.LaunchURL()); other == "" || other == page {
		t.Fatalf("second page token %q", other)
	}
	// A link not used in time is no good.
	late := f.srv.LaunchURL()
	f.srv.launches.now = func() time.Time { return time.Now().Add(launchTTL + time.Second) }
	if _, resp := f.signIn(late); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an expired sign-in link: %s, want 401", resp.Status)
	}
}

func TestEventStreamNeedsAOneTimeTicket(t *testing.T) {
	f := serve(t)
	page, _ := f.signIn(f.srv.LaunchURL())
	var got struct{ Ticket string }
	must(t, json.Unmarshal([]byte(f.expect(f.request("POST", "/api/events/ticket", map[string]string{"Authorization": "Bearer " + page}, ""), 200)), &got))
	noAuth := map[string]string{"Authorization": ""}
	f.expect(f.request("GET", "/api/events?ticket="+strings.Repeat("0", 64), noAuth, ""), http.StatusUnauthorized)
	resp := f.request("GET", "/api/events?ticket="+got.Ticket, noAuth, "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events with a ticket: %s", resp.Status)
	}
	resp.Body.Close()
	f.expect(f.request("GET", "/api/events?ticket="+got.Ticket, noAuth, ""), http.StatusUnauthorized)
	// A ticket opens the stream and nothing else.
	must(t, json.Unmarshal([]byte(f.expect(f.request("POST", "/api/events/ticket", nil, ""), 200)), &got))
	f.expect(f.request("GET", "/api/entries?ticket="+got.Ticket, noAuth, ""), http.StatusUnauthorized)
	f.expect(f.request("GET", "/api/entries", map[string]string{"Authorization": "Bearer " + got.Ticket}, ""), http.StatusUnauthorized)
}

func TestNoCookieIsEverSet(t *testing.T) {
	f := serve(t)
	page, resp := f.signIn(f.srv.LaunchURL())
	all := []*http.Response{resp}
	bearer := map[string]string{"Authorization": "Bearer " + page}
	for _, path := range []string{"/", "/app.js", "/app.css", "/api/status", "/api/entries", "/nope"} {
		all = append(all, f.request("GET", path, bearer, ""), f.request("GET", path, map[string]string{"Authorization": ""}, ""))
	}
	all = append(all, f.request("POST", "/api/events/ticket", bearer, ""))
	for _, r := range all {
		if c := r.Header.Values("Set-Cookie"); len(c) > 0 {
			t.Errorf("%s %s set a cookie: %q", r.Request.Method, r.Request.URL, c)
		}
	}
}

func TestSecretIsNewAtEveryStart(t *testing.T) {
	a, b := serve(t), serve(t)
	if len(a.secret) != 64 || a.secret == b.secret {
		t.Fatalf("secrets %q and %q", a.secret, b.secret)
	}
	a.expect(a.request("GET", "/api/status", map[string]string{"Authorization": "Bearer " + b.secret}, ""), http.StatusUnauthorized)
	page, _ := a.signIn(a.srv.LaunchURL())
	b.expect(b.request("GET", "/api/status", map[string]string{"Authorization": "Bearer " + page}, ""), http.StatusUnauthorized)
}

func TestPageHoldsNothing(t *testing.T) {
	f := serve(t)
	noAuth := map[string]string{"Authorization": ""}
	page := f.request("GET", "/", noAuth, "")
	html := f.expect(page, 200)
	if !strings.Contains(html, `<script src="/app.js"`) || strings.Contains(html, "<script>") {
		t.Errorf("page: scripts must come from /app.js only:\n%s", html)
	}
	csp := page.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy: %q", csp)
	}
	f.seed("an error text of the person's")
	for _, path := range []string{"/", "/app.js", "/app.css", "/?token=" + f.secret} {
		body := f.expect(f.request("GET", path, noAuth, ""), 200)
		if strings.Contains(body, "an error text") || strings.Contains(body, f.secret) {
			t.Errorf("%s shows data", path)
		}
	}
}

func TestForeignHostIsRefused(t *testing.T) {
	f := serve(t)
	port := f.srv.URL()[strings.LastIndex(f.srv.URL(), ":")+1 : len(f.srv.URL())-1]
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1:1", "127.0.0.2:" + port} {
		if resp := f.request("GET", "/api/status", map[string]string{"Host": host}, ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("Host %q: %s, want 403", host, resp.Status)
		}
	}
	f.expect(f.request("GET", "/api/status", map[string]string{"Host": "localhost:" + port}, ""), 200)
}

func TestForeignOriginIsRefused(t *testing.T) {
	f := serve(t)
	f.seed("boom")
	own := strings.TrimSuffix(f.srv.URL(), "/")
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1:1", "https://" + strings.TrimPrefix(own, "http://")} {
		if resp := f.request("POST", "/api/entries/read-all", map[string]string{"Origin": origin}, ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("Origin %q: POST %s, want 403", origin, resp.Status)
		}
		if resp := f.request("GET", "/api/entries", map[string]string{"Origin": origin}, ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("Origin %q: GET %s, want 403", origin, resp.Status)
		}
	}
	if es, _ := f.db.Entries(context.Background(), true); len(es) != 1 {
		t.Fatalf("a refused request changed the Inbox: %d unread", len(es))
	}
	f.expect(f.request("POST", "/api/entries/read-all", map[string]string{"Origin": own}, ""), http.StatusNoContent)
	if es, _ := f.db.Entries(context.Background(), true); len(es) != 0 {
		t.Fatalf("read-all from the page's own origin did not mark read: %d unread", len(es))
	}
}

func TestStateChangesOnlyByPost(t *testing.T) {
	f := serve(t)
	f.seed("boom")
	es, _ := f.db.Entries(context.Background(), false)
	id := es[0].ID
	for _, path := range []string{"/api/entries/read-all", "/api/entries/clear", "/api/settings", "/api/entries/" + jsonID(id) + "/read"} {
		f.expect(f.request("GET", path, nil, ""), http.StatusMethodNotAllowed)
	}
	if es, _ := f.db.Entries(context.Background(), true); len(es) != 1 {
		t.Fatalf("a GET changed the Inbox")
	}
	f.expect(f.request("POST", "/api/settings", map[string]string{"Content-Type": "text/plain"}, `{"paused":true}`), http.StatusUnsupportedMediaType)
	if f.daemon.Status().Settings.Paused {
		t.Fatal("a settings change without a JSON content type was applied")
	}
}

func jsonID(id int64) string { b, _ := json.Marshal(id); return string(b) }

func TestEntriesAndSettings(t *testing.T) {
	f := serve(t)
	f.seed("first")
	f.seed(`<img src=x onerror=alert(1)>`)
	var es []Entry
	must(t, json.Unmarshal([]byte(f.expect(f.request("GET", "/api/entries", nil, ""), 200)), &es))
	if len(es) != 2 || es[0].ErrorText != `<img src=x onerror=alert(1)>` || es[1].ErrorText != "first" || es[0].Read {
		t.Fatalf("entries, newest first: %+v", es)
	}
	f.expect(f.request("POST", "/api/entries/"+jsonID(es[1].ID)+"/read", nil, ""), http.StatusNoContent)
	f.expect(f.request("POST", "/api/entries/999999/read", nil, ""), http.StatusNotFound)
	f.expect(f.request("POST", "/api/entries/x/read", nil, ""), http.StatusBadRequest)
	must(t, json.Unmarshal([]byte(f.expect(f.request("GET", "/api/entries?unread=1", nil, ""), 200)), &es))
	if len(es) != 1 || es[0].ErrorText != `<img src=x onerror=alert(1)>` {
		t.Fatalf("unread entries: %+v", es)
	}
	f.expect(f.request("POST", "/api/entries/clear", nil, ""), http.StatusNoContent)
	if body := f.expect(f.request("GET", "/api/entries", nil, ""), 200); strings.TrimSpace(body) != "[]" {
		t.Fatalf("after clear: %s", body)
	}

	var set status.Settings
	must(t, json.Unmarshal([]byte(f.expect(f.request("POST", "/api/settings", map[string]string{"Content-Type": "application/json"}, `{"retry_enabled":false,"paused":true}`), 200)), &set))
	if set.RetryEnabled || !set.Paused || set != *f.daemon.Status().Settings {
		t.Fatalf("settings: %+v", set)
	}
	f.expect(f.request("POST", "/api/settings", map[string]string{"Content-Type": "application/json"}, `{"retry":false}`), http.StatusBadRequest)
}

// The daemon is told of every request, refused ones too: it gives memory
// back once they are quiet.
func TestDaemonToldOfEachRequest(t *testing.T) {
	f := serve(t)
	f.expect(f.request("GET", "/api/entries", nil, ""), 200)
	f.expect(f.request("GET", "/api/entries", map[string]string{"Authorization": ""}, ""), http.StatusUnauthorized)
	if n := f.daemon.used.Load(); n != 2 {
		t.Fatalf("told of %d requests, want 2", n)
	}
}

func TestOneSession(t *testing.T) {
	f := serve(t)
	var s status.Session
	must(t, json.Unmarshal([]byte(f.expect(f.request("GET", "/api/sessions/4f2c9a1e-0000-4000-8000-000000000001", nil, ""), 200)), &s))
	if s.Agent != "kimi" || s.State != "failed" {
		t.Fatalf("session: %+v", s)
	}
	f.expect(f.request("GET", "/api/sessions/4f2c9a1e-0000-4000-8000-0000000000", nil, ""), http.StatusConflict)
	must(t, json.Unmarshal([]byte(f.expect(f.request("GET", "/api/sessions/4f2c9a1e-0000-4000-8000-000000000002", nil, ""), 200)), &s))
	if s.Agent != "claude" {
		t.Fatalf("session by exact id: %+v", s)
	}
	f.expect(f.request("GET", "/api/sessions/nope", nil, ""), http.StatusNotFound)
}

// A session's timeline: its stored events, decisions and attempts, the
// state and the story in words, found by a prefix of its id.
func TestTimeline(t *testing.T) {
	f := serve(t)
	now := time.Now().UTC()
	must(t, f.db.Commit(context.Background(), inbox.Batch{
		Sessions: []inbox.SessionRow{{Agent: "claude", Session: "4f2c9a1e-0000-4000-8000-000000000002", Project: "/home/p/web", State: "gave_up", UpdatedAt: now}},
		Events: []inbox.EventRow{{Agent: "claude", Session: "4f2c9a1e-0000-4000-8000-000000000002", DetectedAt: now, Kind: "turn_failed",
			Class: "provider_error", Code: "500", Message: "<b>API Error: 500</b>"}},
		Decisions: []inbox.DecisionRow{{Agent: "claude", Session: "4f2c9a1e-0000-4000-8000-000000000002", Time: now.Add(time.Second), What: "provider error: attempt 1 of 3 in 10s"}},
	}))
	body := f.expect(f.request("GET", "/api/sessions/4f2c9a1e-0000-4000-8000-00000000000/timeline", nil, ""), 200)
	var tl struct {
		Agent      string `json:"agent"`
		StateWords string `json:"state_words"`
		Events     []struct {
			Message string `json:"message"`
		} `json:"events"`
		Attempts []any `json:"attempts"`
		Story    []struct {
			Kind, Text, Quote string
		} `json:"story"`
	}
	must(t, json.Unmarshal([]byte(body), &tl))
	if tl.Agent != "claude" || tl.StateWords != "gave up" || len(tl.Events) != 1 || tl.Attempts == nil || len(tl.Story) != 2 ||
		tl.Story[0].Text != "turn failed: provider error (500)" || tl.Story[0].Quote != "<b>API Error: 500</b>" || tl.Story[1].Kind != "decision" {
		t.Fatalf("timeline: %s", body)
	}
	if !strings.Contains(body, `"attempts":[]`) {
		t.Errorf("no attempts must be [], not null: %s", body)
	}
	f.expect(f.request("GET", "/api/sessions/nope/timeline", nil, ""), http.StatusNotFound)
}

func TestEventsFollowChanges(t *testing.T) {
	f := serve(t)
	resp := f.request("GET", "/api/events", nil, "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	events := make(chan [2]string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{name, v}
			}
		}
		close(events)
	}()
	next := func(want string) string {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok || ev[0] != want {
				t.Fatalf("event %q (open %v), want %q", ev[0], ok, want)
			}
			return ev[1]
		case <-time.After(10 * time.Second):
			t.Fatalf("no %q event", want)
		}
		return ""
	}
	next("status")
	if data := next("entries"); data != "[]" {
		t.Fatalf("first entries: %s", data)
	}
	f.seed("live one")
	if data := next("status"); !strings.Contains(data, `"overall":"needs_attention"`) {
		t.Fatalf("status with an unread entry: %s", data)
	}
	data := next("entries")
	if !strings.Contains(data, `"error_text":"live one"`) {
		t.Fatalf("entries after a new one: %s", data)
	}
	var es []Entry
	must(t, json.Unmarshal([]byte(data), &es))
	f.expect(f.request("POST", "/api/entries/"+jsonID(es[0].ID)+"/read", nil, ""), http.StatusNoContent)
	if data := next("status"); !strings.Contains(data, `"overall":"retrying"`) {
		t.Fatalf("status once the entry is read: %s", data)
	}
	next("entries")
	off := false
	if _, err := f.daemon.Change(status.SettingsChange{RetryEnabled: &off}); err != nil {
		t.Fatal(err)
	}
	if data := next("status"); !strings.Contains(data, `"retry_enabled":false`) {
		t.Fatalf("status after a change: %s", data)
	}
	// Stopping the server ends the stream.
	f.srv.Stop()
	for range events {
	}
}

func TestPublishAndLauncher(t *testing.T) {
	f := serve(t)
	must(t, f.srv.Publish(f.dir))
	for name, want := range map[string]string{secretFile: f.secret + "\n", addressFile: f.srv.URL() + "\n"} {
		path := filepath.Join(f.dir, name)
		b, err := os.ReadFile(path)
		must(t, err)
		fi, _ := os.Stat(path)
		if string(b) != want || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %q mode %v", name, b, fi.Mode())
		}
	}
	bin := t.TempDir()
	args := filepath.Join(bin, "args")
	must(t, os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+args+"\n"), 0o755))
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	link := f.srv.LaunchURL()
	// Without a display there is no browser to open, and nothing is written.
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	if err := OpenWindow(f.dir, link); !errors.Is(err, ErrCannotOpen) {
		t.Fatalf("OpenWindow with no display: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, launcherFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a launcher written with no browser to open it: %v", err)
	}
	t.Setenv("DISPLAY", ":0")
	must(t, OpenWindow(f.dir, link))
	launcher := filepath.Join(f.dir, launcherFile)
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got, _ = os.ReadFile(args)
	}
	if strings.TrimSpace(string(got)) != launcher {
		t.Fatalf("the opener got %q, want the launcher %s", got, launcher)
	}
	page, _ := os.ReadFile(launcher)
	if !strings.Contains(string(page), `url=`+link+`"`) || strings.Contains(string(page), f.secret) {
		t.Fatalf("launcher: %s", page)
	}
	if fi, _ := os.Stat(launcher); fi.Mode().Perm() != 0o600 {
		t.Errorf("launcher mode %v", fi.Mode())
	}
	Unpublish(f.dir)
	for _, name := range []string{secretFile, addressFile, launcherFile} {
		if _, err := os.Stat(filepath.Join(f.dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Unpublish: %v", name, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
