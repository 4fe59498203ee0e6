package classify

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const openCodeSamples = "testdata/samples/opencode"

// openCodeExpected reads samples/opencode/EXPECTED.tsv.
func openCodeExpected(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(openCodeSamples, "EXPECTED.tsv"))
	if err != nil {
		t.Fatalf("samples: %v", err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if cols := strings.Split(sc.Text(), "\t"); len(cols) == 4 && cols[0] != "scenario" {
			rows = append(rows, cols)
		}
	}
	return rows
}

// lastEnding is the last turn_done or turn_failed, or nil.
func lastEnding(events []Event) *Event {
	for i := len(events) - 1; i >= 0; i-- {
		if k := events[i].Kind; k == TurnDone || k == TurnFailed {
			return &events[i]
		}
	}
	return nil
}

func checkEnding(t *testing.T, file string, events []Event, kind, class, reset string) {
	t.Helper()
	e := lastEnding(events)
	if kind == "open" {
		if e != nil {
			t.Errorf("%s: turn still open, got %s", file, e.Kind)
		}
		return
	}
	if e == nil || string(e.Kind) != kind {
		t.Fatalf("%s: last ending %v, want %s", file, e, kind)
	}
	if e.Agent != "opencode" || !strings.HasPrefix(e.Session, "ses_") || e.Project != "/home/dev/project" || e.Time.IsZero() {
		t.Errorf("%s: event %+v lacks agent, session, project or time", file, e)
	}
	gotClass, gotReset := "-", "-"
	if f := e.Failure; f != nil {
		gotClass = string(f.Class)
		if !f.ResetAt.IsZero() {
			gotReset = f.ResetAt.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		if f.Class == Auth && f.Hint != openCodeLoginHint {
			t.Errorf("%s: auth failure without the login hint", file)
		}
	}
	if gotClass != class || gotReset != reset {
		t.Errorf("%s: class %s reset %s, want %s %s", file, gotClass, gotReset, class, reset)
	}
}

// TestOpenCodeExpected checks every row of EXPECTED.tsv on the live stream
// capture, and on the database, which shows how a turn ended but not why it
// was waiting: a quota sleep that was aborted reads as cancelled there
// (docs/agents/opencode.md §6.4).
func TestOpenCodeExpected(t *testing.T) {
	agent, ok := Lookup("opencode")
	if !ok {
		t.Fatal("opencode not registered")
	}
	for _, row := range openCodeExpected(t) {
		name, kind, class, reset := row[0], row[1], row[2], row[3]
		t.Run(name, func(t *testing.T) {
			for _, suffix := range []string{".sse_event.jsonl", ".sse_global_event.jsonl", ".opencode.db"} {
				file := filepath.Join(openCodeSamples, name+suffix)
				if _, err := os.Stat(file); err != nil {
					continue
				}
				head, _ := os.ReadFile(file)
				if a, ok := Recognize(file, head[:min(len(head), 4096)]); !ok || a.Name != "opencode" {
					t.Errorf("%s not recognised as OpenCode", file)
				}
				events, err := readFile(file, agent)
				if err != nil {
					t.Fatal(err)
				}
				c, r := class, reset
				if suffix == ".opencode.db" && class == "usage_limit" {
					c, r = "cancelled", "-"
				}
				checkEnding(t, file, events, kind, c, r)
			}
		})
	}
}

// TestOpenCodeStreamEvents checks the in-turn kinds on the captures.
func TestOpenCodeStreamEvents(t *testing.T) {
	agent, _ := Lookup("opencode")
	count := func(name string) map[Kind]int {
		events, err := readFile(filepath.Join(openCodeSamples, name+".sse_event.jsonl"), agent)
		if err != nil {
			t.Fatal(err)
		}
		n := map[Kind]int{}
		for _, e := range events {
			n[e.Kind]++
			if e.Kind == UserMessage && e.Text == "" {
				t.Errorf("%s: user message without its text", name)
			}
		}
		return n
	}
	if n := count("e500_giveup"); n[AgentRetrying] != 5 || n[UserMessage] != 1 || n[TurnStarted] != 1 || n[TurnFailed] != 1 || n[UsageLimited] != 0 {
		t.Errorf("e500_giveup: %v", n)
	}
	if n := count("e429_quota_openai"); n[AgentRetrying] == 0 || n[UsageLimited] != 0 {
		t.Errorf("an OpenAI quota text on OpenCode's normal schedule is OpenCode retrying: %v", n)
	}
	if n := count("permission_bash"); n[BoxOpened] != 1 || n[BoxClosed] != 1 || n[TurnDone] != 1 || n[UserMessage] != 1 {
		t.Errorf("permission_bash: %v", n)
	}
}

func TestOpenCodeRetryStatus(t *testing.T) {
	at := time.UnixMilli(1796029700000).UTC()
	cases := []struct {
		line  string
		kind  Kind
		reset time.Time
	}{
		{`{"type":"retry","attempt":1,"message":"Internal server error","next":1796029702000}`, AgentRetrying, time.Time{}},
		{`{"type":"retry","attempt":1,"message":"Weekly usage limit reached. It will reset in 2 hours.","action":{"reason":"account_rate_limit"},"next":1796036900000}`, UsageLimited, time.UnixMilli(1796036900000)},
		{`{"type":"retry","attempt":1,"message":"5-hour usage limit reached","next":1796029702000}`, UsageLimited, time.UnixMilli(1796029702000)},
		{`{"type":"retry","attempt":2,"message":"Rate limited","next":1796030300001}`, UsageLimited, time.UnixMilli(1796030300001)},
		{`{"type":"retry","attempt":2,"message":"Rate limited","next":1796030299000}`, AgentRetrying, time.Time{}},
		{`{"type":"image_processing"}`, AgentActivity, time.Time{}},
	}
	for _, c := range cases {
		r := newOpenCodeReader("x.jsonl", nil).(*openCodeReader)
		r.ref = at
		// An event id made at `at`: (ms mod 2^36)<<12, 12 hex digits.
		id := "evt_" + hex12(at) + "0000000000000A"
		evs := r.Read([]byte(`{"id":"` + id + `","type":"session.status","properties":{"sessionID":"ses_a","status":` + c.line + `}}`))
		if len(evs) != 1 || evs[0].Kind != c.kind {
			t.Errorf("%s: got %+v, want %s", c.line, evs, c.kind)
			continue
		}
		if !evs[0].Time.Equal(at) {
			t.Errorf("%s: time %v from the id, want %v", c.line, evs[0].Time, at)
		}
		if c.kind != UsageLimited && evs[0].Failure != nil {
			t.Errorf("%s: OpenCode's own retry carries a failure %+v", c.line, evs[0].Failure)
		}
		if c.kind == UsageLimited && !evs[0].Failure.ResetAt.Equal(c.reset) {
			t.Errorf("%s: reset %v, want %v", c.line, evs[0].Failure.ResetAt, c.reset)
		}
	}
}

// TestOpenCodeTimeBeyondYear9999 keeps a nonsense time out of an event: it
// could not be written as JSON.
func TestOpenCodeTimeBeyondYear9999(t *testing.T) {
	r := newOpenCodeReader("x.jsonl", nil)
	evs := r.Read([]byte(`{"type":"session.status","properties":{"sessionID":"ses_a","status":{"type":"retry","attempt":1,"message":"usage limit","next":9000000000000000}}}`))
	if len(evs) != 1 || evs[0].Kind != UsageLimited || !evs[0].Failure.ResetAt.IsZero() {
		t.Fatalf("events %+v", evs)
	}
	if _, err := json.Marshal(evs[0]); err != nil {
		t.Errorf("event cannot be written: %v", err)
	}
}

func hex12(t time.Time) string {
	const digits = "0123456789abcdef"
	v := uint64(t.UnixMilli()%(1<<36)) << 12
	b := make([]byte, 12)
	for i := 11; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b)
}

func TestOpenCodeFailureClasses(t *testing.T) {
	cases := []struct {
		err   string
		class Class
	}{
		{`{"name":"APIError","data":{"message":"Your account is not active","statusCode":403,"responseBody":"{\"error\":{\"type\":\"billing_not_active\",\"code\":\"billing_not_active\"}}"}}`, UsageLimit},
		{`{"name":"APIError","data":{"message":"Forbidden","statusCode":403}}`, Auth},
		{`{"name":"APIError","data":{"message":"Unauthorized: request was blocked by a gateway or proxy"}}`, Auth},
		{`{"name":"APIError","data":{"message":"You exceeded your current quota","statusCode":429,"responseBody":"{\"error\":{\"code\":\"insufficient_quota\"}}"}}`, UsageLimit},
		{`{"name":"APIError","data":{"message":"Rate limit reached for requests","statusCode":429,"responseBody":"{\"error\":{\"code\":\"rate_limit_exceeded\"}}"}}`, ProviderError},
		{`{"name":"APIError","data":{"message":"model not found","statusCode":404}}`, Rejected},
		{`{"name":"APIError","data":{"message":"Connection reset by server","isRetryable":true}}`, ProviderError},
		{`{"name":"ProviderAuthError","data":{"providerID":"x","message":"no key"}}`, Auth},
		{`{"name":"ContextOverflowError","data":{"message":"Session too large to compact"}}`, Rejected},
		{`{"name":"ContentFilterError","data":{"message":"filtered"}}`, Rejected},
		{`{"name":"UnknownError","data":{"message":"Provider is overloaded"}}`, ProviderError},
		{`{"name":"UnknownError","data":{"message":"something odd"}}`, Unknown},
		{`{"name":"MessageOutputLengthError","data":{}}`, Unknown},
		{`{"name":"NewError","data":{"message":"500"}}`, Unknown},
	}
	for _, c := range cases {
		r := newOpenCodeReader("x.jsonl", nil).(*openCodeReader)
		evs := r.Read([]byte(`{"type":"message.updated","properties":{"sessionID":"ses_a","info":{"id":"msg_1","role":"assistant","time":{"created":1,"completed":2},"error":` + c.err + `}}}`))
		if len(evs) != 1 || evs[0].Kind != TurnFailed || evs[0].Failure.Class != c.class {
			t.Errorf("%s: got %+v, want %s", c.err, evs, c.class)
		}
	}
	// A quota answer's reset time comes from retry-after and its date.
	r := newOpenCodeReader("x.jsonl", nil).(*openCodeReader)
	evs := r.Read([]byte(`{"type":"message.updated","properties":{"sessionID":"ses_a","info":{"id":"msg_1","role":"assistant","time":{"created":1,"completed":2},"error":{"name":"APIError","data":{"message":"Go usage limit reached","statusCode":429,"responseHeaders":{"date":"Mon, 30 Nov 2026 09:10:25 GMT","retry-after":"7200"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"GoUsageLimitError\"}}"}}}}}`))
	if want := time.Date(2026, 11, 30, 11, 10, 25, 0, time.UTC); len(evs) != 1 || !evs[0].Failure.ResetAt.Equal(want) || evs[0].Failure.Class != UsageLimit {
		t.Errorf("Go limit: %+v", evs)
	}
}

// A provider's retry-after gives OpenCode's return time; an absurd one gives
// none rather than a wrapped-around or far-future time.
func TestOpenCodeRetryAfter(t *testing.T) {
	date := "Mon, 30 Nov 2026 09:00:00 GMT"
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    map[string]string
		want time.Time
	}{
		{map[string]string{"Date": date, "retry-after-ms": "1500"}, base.Add(1500 * time.Millisecond)},
		{map[string]string{"date": date, "Retry-After": "120"}, base.Add(2 * time.Minute)},
		{map[string]string{"date": date, "retry-after": "Mon, 30 Nov 2026 14:00:00 GMT"}, base.Add(5 * time.Hour)},
		{map[string]string{"date": date, "retry-after": "1e300"}, time.Time{}},
		{map[string]string{"date": date, "retry-after-ms": "9.3e18"}, time.Time{}},
		{map[string]string{"retry-after": "120"}, time.Time{}},
	} {
		if got := openCodeRetryAfter(tc.h); !got.Equal(tc.want) {
			t.Errorf("openCodeRetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

// A date header reads as net/http reads it, in each of HTTP's forms.
func TestParseHTTPTime(t *testing.T) {
	for _, v := range []string{
		"Mon, 30 Nov 2026 09:00:00 GMT", "Monday, 30-Nov-26 09:00:00 UTC", "Mon Nov 30 09:00:00 2026",
		"Mon, 30 Nov 2026 09:00:00 +0000", "", "120", "yesterday",
	} {
		want, werr := http.ParseTime(v)
		got, err := parseHTTPTime(v)
		if !got.Equal(want) || (err == nil) != (werr == nil) {
			t.Errorf("parseHTTPTime(%q) = %v, %v; net/http: %v, %v", v, got, err, want, werr)
		}
	}
}
