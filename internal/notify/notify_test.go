package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"nudge/internal/dbustest"
	"nudge/internal/testenv"
)

// bus is this test binary's private session bus (nil without dbus-daemon).
var bus *dbustest.Bus

// TestMain points DBUS_SESSION_BUS_ADDRESS at a private bus before anything
// connects: godbus keeps the first session bus for the whole process.
func TestMain(m *testing.M) {
	if _, err := exec.LookPath("dbus-daemon"); err == nil {
		bus, err = dbustest.Start()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Setenv("DBUS_SESSION_BUS_ADDRESS", bus.Addr)
	}
	code := m.Run()
	if bus != nil {
		bus.Close()
	}
	os.Exit(code)
}

// logBuffer collects log output from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newNotifier(t *testing.T, cfg Config) (*Notifier, *logBuffer) {
	t.Helper()
	var logs logBuffer
	n := New(cfg, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { n.Close(context.Background()) })
	return n, &logs
}

// closeWithin closes n, waiting up to 10 s for the sends in flight.
func closeWithin(t *testing.T, n *Notifier) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// literal is text that must pass every hop unchanged.
const literal = `HTTP 529 overloaded; $HOME "ok" <b>not bold</b> & 'quoted' \n`

func TestDesktop(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	rec := dbustest.Record(t, bus.Addr)
	n, logs := newNotifier(t, Config{Desktop: true})
	n.Send(Message{Title: "nudge: claude needs you", Body: literal, Agent: "claude", Session: "s1"})
	got := rec.Next(t)
	closeWithin(t, n)
	if got.AppName != "nudge" || got.Summary != "nudge: claude needs you" || got.Body != literal {
		t.Errorf("notification = app %q, summary %q, body %q", got.AppName, got.Summary, got.Body)
	}
	if u, ok := got.Hints["urgency"]; !ok || u.Value() != byte(1) {
		t.Errorf("urgency hint = %v, want byte 1 (normal)", u)
	}
	if _, ok := got.Hints["sound-name"]; ok {
		t.Error("sound-name hint set: the notification was sent as an Alert")
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("errors logged:\n%s", logs)
	}
}

// Without a notification server every desktop notification fails the same
// way: the first of a run is one plain warning that says what to do, the
// others (and the error itself) are details at DEBUG.
func TestDesktopFailureIsWarnedOnce(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	// The bus has no notification server now.
	conn, err := dbus.SessionBus()
	if err != nil {
		t.Fatal(err)
	}
	var owned bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.freedesktop.Notifications").Store(&owned); err != nil || owned {
		t.Fatalf("a notification server is running (%v, %v)", owned, err)
	}
	n, logs := newNotifier(t, Config{Desktop: true})
	for range 3 {
		n.Send(Message{Title: "t", Body: "b"})
	}
	closeWithin(t, n)
	out := logs.String()
	if strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, "set notify.ntfy.url to an ntfy topic") ||
		strings.Count(out, `level=DEBUG msg="desktop notification not shown"`) != 3 || strings.Contains(out, "level=ERROR") {
		t.Errorf("want one warning that suggests ntfy, and each failure at DEBUG:\n%s", out)
	}

	// With a push set up, the warning does not ask for one.
	srv, _ := endpoint(t)
	n, logs = newNotifier(t, Config{Desktop: true, WebhookURL: srv.URL})
	n.Send(Message{Title: "t", Body: "b"})
	closeWithin(t, n)
	if out := logs.String(); strings.Count(out, "level=WARN") != 1 || strings.Contains(out, "ntfy") || !strings.Contains(out, "phone push alone") {
		t.Errorf("with a webhook:\n%s", out)
	}
}

// Where no notification server answers on the bus, the notification goes
// to notify-send TITLE BODY: a body that starts like an option (a folder
// named "--icon=…" in a record) reaches it as the body, not an option.
func TestNotifySendGetsNoOption(t *testing.T) {
	if conn, err := dbus.SessionBus(); err == nil {
		var owned bool
		if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.freedesktop.Notifications").Store(&owned); err != nil || owned {
			t.Fatalf("a notification server is running (%v, %v)", owned, err)
		}
	}
	bin := t.TempDir()
	args := filepath.Join(bin, "args")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + args + "\n"
	if err := os.WriteFile(filepath.Join(bin, "notify-send"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	n, _ := newNotifier(t, Config{Desktop: true})
	n.Send(Message{Title: "-u critical", Body: "--icon=/etc/passwd --expire-time=0: Claude Code needs you to sign in again"})
	closeWithin(t, n)
	out, err := os.ReadFile(args)
	if err != nil {
		t.Fatalf("notify-send was not run: %v", err)
	}
	argv := strings.Split(string(out), "\n")
	if len(argv) < 2 || strings.HasPrefix(argv[0], "-") || strings.HasPrefix(argv[1], "-") ||
		!strings.Contains(argv[1], "--icon=/etc/passwd --expire-time=0: Claude Code") {
		t.Errorf("notify-send %q: the title and body must not start like options", argv)
	}
}

// request is what a push endpoint received.
type request struct {
	Method, Path string
	Header       http.Header
	Body         string
}

// endpoint is a stand-in for ntfy or a webhook on 127.0.0.1 that answers
// each request with the next status (200 once they run out).
func endpoint(t *testing.T, statuses ...int) (*httptest.Server, <-chan request) {
	t.Helper()
	got := make(chan request, 16)
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- request{r.Method, r.URL.Path, r.Header, string(body)}
		mu.Lock()
		status := http.StatusOK
		if len(statuses) > 0 {
			status, statuses = statuses[0], statuses[1:]
		}
		mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// drain returns what is in ch after the notifier closed.
func drain(ch <-chan request) []request {
	var out []request
	for {
		select {
		case r := <-ch:
			out = append(out, r)
		default:
			return out
		}
	}
}

func TestNtfy(t *testing.T) {
	srv, got := endpoint(t)
	n, _ := newNotifier(t, Config{NtfyURL: srv.URL + "/nudge-topic"})
	n.Send(Message{Title: "nudge: codex gave up", Body: literal, Agent: "codex", Project: "/p", Session: "s1",
		Urgent: true, Link: "http://127.0.0.1:4711/#entry-3"})
	n.Send(Message{Title: "Kimi — needs sign-in\nnow", Body: "run kimi login"})
	closeWithin(t, n)

	reqs := drain(got)
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if reqs[0].Header.Get("Priority") != "high" { // the goroutines may arrive in any order
		reqs[0], reqs[1] = reqs[1], reqs[0]
	}
	urgent, plain := reqs[0], reqs[1]
	if urgent.Method != http.MethodPost || urgent.Path != "/nudge-topic" || urgent.Body != literal {
		t.Errorf("request = %s %s %q", urgent.Method, urgent.Path, urgent.Body)
	}
	want := map[string]string{"Title": "nudge: codex gave up", "Priority": "high", "Tags": "warning,codex",
		"Click": "http://127.0.0.1:4711/#entry-3", "Content-Type": "text/plain; charset=utf-8"}
	for k, v := range want {
		if got := urgent.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	title, err := new(mime.WordDecoder).DecodeHeader(plain.Header.Get("Title"))
	if err != nil || title != "Kimi — needs sign-in now" {
		t.Errorf("non-ASCII title header %q decodes to %q, %v", plain.Header.Get("Title"), title, err)
	}
	if plain.Header.Get("Priority") != "default" || plain.Header.Get("Tags") != "bell" || plain.Header.Values("Click") != nil {
		t.Errorf("plain message headers = %v", plain.Header)
	}
}

func TestWebhook(t *testing.T) {
	srv, got := endpoint(t)
	n, _ := newNotifier(t, Config{WebhookURL: srv.URL + "/hook"})
	m := Message{Title: "nudge: claude gave up", Body: literal, Agent: "claude", Project: "/home/u/p", Session: "s1",
		Urgent: true, Link: "http://127.0.0.1:4711/"}
	before := time.Now().UTC().Truncate(time.Second)
	n.Send(m)
	closeWithin(t, n)
	after := time.Now().UTC()

	reqs := drain(got)
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/hook" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request = %s %s %v", r.Method, r.Path, r.Header)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
		t.Fatalf("body %q: %v", r.Body, err)
	}
	sent, err := time.Parse(time.RFC3339Nano, fmt.Sprint(body["time"]))
	if err != nil || sent.Before(before) || sent.After(after) || sent.Location() != time.UTC {
		t.Errorf("time = %v (%v), want between %v and %v in UTC", body["time"], err, before, after)
	}
	delete(body, "time")
	want := map[string]any{"title": m.Title, "body": literal, "agent": "claude", "project": "/home/u/p",
		"session": "s1", "urgent": true, "link": "http://127.0.0.1:4711/"}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body = %v\nwant %v", body, want)
	}
}

func TestPushRetries(t *testing.T) {
	fast := []time.Duration{time.Millisecond, time.Millisecond}
	for _, c := range []struct {
		name     string
		statuses []int
		tries    int
		logged   string
	}{
		{"delivered on the third try", []int{500, 503}, 3, "push delivered"},
		{"gives up after three tries", []int{500, 502, 500, 500}, 3, "push failed"},
		{"429 is retried", []int{429}, 2, "push delivered"},
		{"a refused request is not retried", []int{400, 200}, 1, "push failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, got := endpoint(t, c.statuses...)
			n, logs := newNotifier(t, Config{NtfyURL: srv.URL + "/t", RetryDelays: fast})
			n.Send(Message{Title: "t", Body: "same body every try"})
			closeWithin(t, n)
			reqs := drain(got)
			if len(reqs) != c.tries {
				t.Fatalf("%d tries, want %d", len(reqs), c.tries)
			}
			for _, r := range reqs {
				if r.Body != "same body every try" || r.Header.Get("Title") != "t" {
					t.Errorf("retried request = %+v", r)
				}
			}
			if !strings.Contains(logs.String(), c.logged) {
				t.Errorf("log lacks %q:\n%s", c.logged, logs)
			}
			if strings.Contains(logs.String(), srv.URL+"/t") {
				t.Errorf("the topic URL was logged:\n%s", logs)
			}
		})
	}
}

func TestSendNeverBlocks(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select { // hang until the test or the client lets go
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	n, logs := newNotifier(t, Config{WebhookURL: srv.URL})
	returned := make(chan struct{})
	go func() {
		n.Send(Message{Title: "t", Body: "b"})
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Send blocked on a hanging endpoint")
	}
	<-entered // the request is in flight and stays there

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := n.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with a hanging send = %v, want context.DeadlineExceeded", err)
	}
	if !strings.Contains(logs.String(), "push failed") && !strings.Contains(logs.String(), "abandoned") {
		t.Errorf("the abandoned push was not logged:\n%s", logs)
	}
	n.Send(Message{Title: "after close"}) // dropped, logged, no panic
	if !strings.Contains(logs.String(), "message dropped") {
		t.Errorf("a message after Close was not logged as dropped:\n%s", logs)
	}
}
