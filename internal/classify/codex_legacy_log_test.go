package classify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/internal/watch/disk"
)

// codexLegacyHome is a Codex 0.98.0 root captured for real: one session per
// failure, all writing the one TUI log (samples/codex/README.md).
var codexLegacyHome = filepath.Join(codexSamples, "home-0.98.0")

const codexThread = "01a2327f-8ef8-7ed1-80d5-5216ea2fb84f"

func TestCodexLogFindsTheTurnsErrorLine(t *testing.T) {
	log, err := os.ReadFile(filepath.Join(codexLegacyHome, "log", "codex-tui.log"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 16, 45, 50, 0, time.UTC)
	e, ok := codexLogFind(log, codexThread, start)
	if !ok || e.message != "We're currently experiencing high demand, which may cause temporary errors." ||
		!e.at.Equal(time.Date(2026, 12, 1, 16, 45, 50, 236287000, time.UTC)) {
		t.Errorf("500's error = %+v, %v", e, ok)
	}
	// the refused request's body goes on to the next line
	e, ok = codexLogFind(log, "01a23280-33a2-7b30-90a1-238eae882846", start)
	if !ok || !strings.HasPrefix(e.message, `{"error":{"code":"context_length_exceeded"`) || !strings.HasSuffix(e.message, "}}") {
		t.Errorf("400's error = %+v, %v", e, ok)
	}
	for _, c := range []struct {
		name   string
		thread string
		since  time.Time
	}{
		{"an error before the turn began", codexThread, start.Add(time.Minute)},
		{"a session that never failed", "01a23280-85f5-7f13-8100-9ea0ab6e8613", start},
		{"another thread", "01a2327f-0000-7000-8000-000000000000", start},
	} {
		if e, ok := codexLogFind(log, c.thread, c.since); ok {
			t.Errorf("%s: found %+v", c.name, e)
		}
	}
}

func TestCodexLogLinesAreRead(t *testing.T) {
	at := time.Date(2026, 12, 1, 16, 0, 0, 0, time.UTC)
	line := func(thread, msg string) string {
		return "2026-12-01T16:00:01.5Z  INFO session_loop{thread_id=" + thread + "}: codex_core::codex: Turn error: " + msg
	}
	for _, c := range []struct {
		name, log, want string
	}{
		{"crlf", line("a", "boom") + "\r\n2026-12-01T16:00:02Z  INFO x: y\r\n", "boom"},
		{"cut first line", "ror: boom\n" + line("a", "bang") + "\n", "bang"},
		{"first of two", line("a", "one") + "\n" + line("a", "two") + "\n", "one"},
		{"continued to the end", line("a", "{") + "\n  \"x\": 1\n}\n", "{\n  \"x\": 1\n}"},
		{"another module", "2026-12-01T16:00:01Z  INFO session_loop{thread_id=a}: codex_core::other: Turn error: no\n", ""},
		{"an empty message", line("a", "") + "\n\n", ""},
		{"a bad time", strings.Replace(line("a", "x"), "16:00:01.5Z", "16:00:99Z", 1), ""},
	} {
		e, ok := codexLogFind([]byte(c.log), "a", at)
		if ok != (c.want != "") || e.message != c.want && ok {
			t.Errorf("%s: %+v %v, want %q", c.name, e, ok, c.want)
		}
	}
}

// The messages are those of the real 0.98.0 CLI (the captured log, and the
// texts its binary carries for the other errors).
func TestCodexLegacyFailure(t *testing.T) {
	reset := time.Date(2026, 12, 1, 17, 45, 43, 0, time.UTC)
	at := time.Date(2026, 12, 1, 16, 46, 42, 0, time.UTC)
	for _, c := range []struct {
		msg   string
		class Class
		code  string
	}{
		{"We're currently experiencing high demand, which may cause temporary errors.", ProviderError, "internal_server_error"},
		{"unexpected status 503 Service Unavailable: Service temporarily unavailable, url: http://127.0.0.1:38181/v1/responses, request id: req_1", ProviderError, "http_connection_failed/503"},
		{"unexpected status 502 Bad Gateway: x", ProviderError, "http_connection_failed/502"},
		{"stream disconnected before completion: Transport error: network error: error decoding response body", ProviderError, "response_stream_disconnected"},
		{"Connection failed: error sending request", ProviderError, "response_stream_connection_failed"},
		{"exceeded retry limit, last status: 429 Too Many Requests", ProviderError, "response_too_many_failed_attempts/429"},
		{"unexpected status 401 Unauthorized: Incorrect API key provided: dummy.", Auth, "http_connection_failed/401"},
		{"unexpected status 403 Forbidden: no", Auth, "http_connection_failed/403"},
		{`{"error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":null,"type":"invalid_request_error"}}`, Rejected, "context_window_exceeded"},
		{`{"error":{"code":null,"message":"bad","type":"invalid_request_error"}}`, Rejected, "bad_request"},
		{"Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.", Rejected, "context_window_exceeded"},
		{"You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 5:45 PM.", UsageLimit, "usage_limit_exceeded"},
		{"Quota exceeded. Check your plan and billing details.", UsageLimit, "quota_exceeded"},
		{"To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus.", UsageLimit, "usage_not_included"},
		{"internal error; agent loop died unexpectedly", Unknown, "other"},
		{`{"error":{"type":"server_error"}}`, ProviderError, "other"},
	} {
		f := codexLegacyFailure(c.msg, reset, at)
		if f.Class != c.class || f.Code != c.code || f.Message != c.msg {
			t.Errorf("%q: %s %s %q, want %s %s", c.msg, f.Class, f.Code, f.Message, c.class, c.code)
		}
		if f.Class == UsageLimit && !f.ResetAt.Equal(reset) {
			t.Errorf("%q: reset %v, want the rate-limit window's %v", c.msg, f.ResetAt, reset)
		}
	}
}

// A legacy turn is judged from the log a few seconds after its rollout went
// quiet; without a log line, only after codexLegacyQuiet, as unknown.
func TestCodexLegacySettlesByTheLog(t *testing.T) {
	matches, _ := filepath.Glob(filepath.Join(codexLegacyHome, "sessions", "*", "*", "*", "rollout-*-"+codexThread+".jsonl"))
	if len(matches) != 1 {
		t.Fatalf("the 500 sample: %v", matches)
	}
	read := func(path string) *codexRollout {
		data, err := os.ReadFile(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		r := codexAgent(t).NewReader(path, disk.Files{}).(*codexRollout)
		for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			r.Read([]byte(line))
		}
		return r
	}
	r := read(matches[0])
	if ev := r.Settle(codexLogQuiet - time.Second); len(ev) != 0 {
		t.Fatalf("judged while the rollout was still moving: %+v", ev)
	}
	ev := r.Settle(codexLogQuiet)
	if len(ev) != 1 || ev[0].Kind != TurnFailed || ev[0].Failure.Class != ProviderError ||
		!ev[0].Time.Equal(time.Date(2026, 12, 1, 16, 45, 50, 236287000, time.UTC)) {
		t.Fatalf("settled %+v, want the 500 from the log at its time", ev)
	}
	if again := r.Settle(time.Hour); len(again) != 0 {
		t.Errorf("settled twice: %+v", again)
	}

	// the same rollout in a root without the log
	other := filepath.Join(t.TempDir(), "sessions", "2026", "12", "01", filepath.Base(matches[0]))
	r = read(other)
	if ev := r.Settle(codexLegacyQuiet - time.Second); len(ev) != 0 {
		t.Fatalf("judged without a log line before %s: %+v", codexLegacyQuiet, ev)
	}
	if ev := r.Settle(codexLegacyQuiet); len(ev) != 1 || ev[0].Failure.Class != Unknown || ev[0].Failure.Code != "no_answer" {
		t.Errorf("settled %+v, want unknown from silence", ev)
	}
}

func TestCodexRoot(t *testing.T) {
	for path, want := range map[string]string{
		"/home/dev/.codex/sessions/2026/12/01/rollout-x.jsonl": "/home/dev/.codex",
		"/home/dev/.codex/rollout-x.jsonl":                     "",
		"rollout-x.jsonl":                                      "",
		"/a/other/2026/12/01/rollout-x.jsonl":                  "",
	} {
		if got := codexRoot(path); got != want {
			t.Errorf("codexRoot(%q) = %q, want %q", path, got, want)
		}
	}
}

// FuzzCodexLegacyLog: no log end and no message panics; a found error has
// a message and a class.
func FuzzCodexLegacyLog(f *testing.F) {
	log, err := os.ReadFile(filepath.Join(codexLegacyHome, "log", "codex-tui.log"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(log, codexThread)
	f.Add([]byte("2026-12-01T16:00:01Z  INFO session_loop{thread_id=a}: codex_core::codex: Turn error: {\"error\":{\"code\":1}}\n"), "a")
	f.Add([]byte("2026-12-01T16:00:01Z  INFO session_loop{thread_id=}: codex_core::codex: Turn error: unexpected status 5"), "")
	f.Fuzz(func(t *testing.T, log []byte, thread string) {
		e, ok := codexLogFind(log, thread, time.Time{})
		if !ok {
			return
		}
		if e.message == "" || e.at.IsZero() {
			t.Fatalf("found %+v", e)
		}
		if f := codexLegacyFailure(e.message, time.Time{}, e.at); f.Class == "" || f.Code == "" {
			t.Fatalf("failure %+v", f)
		}
	})
}
