package classify

import (
	"testing"
	"time"
)

// readText is the shared reading of one error text alone.
func readText(text string) Failure {
	var s failureSignals
	s.text("message", text)
	return readFailure(s)
}

// The provider error bodies of docs/failures.md, embedded in a text, are
// read by their typed fields, whatever the words around them.
func TestFailureBodies(t *testing.T) {
	for _, c := range []struct {
		name, text string
		class      Class
	}{
		{"Anthropic", `oops {"type":"error","error":{"type":"overloaded_error","message":"x"}}`, ProviderError},
		{"OpenAI", `{"error":{"message":"x","type":"invalid_request_error","code":"context_length_exceeded"}}`, Rejected},
		{"OpenAI quota", `{"error":{"message":"x","type":"insufficient_quota"}}`, UsageLimit},
		{"Moonshot as a Python dict", `Error code: 429 - {'error': {'message': 'x', 'type': 'engine_overloaded_error'}}`, ProviderError},
		{"Google", `{"error":{"code":503,"message":"x","status":"UNAVAILABLE"}}`, ProviderError},
		{"Google list", `[{"error":{"code":403,"message":"x","status":"PERMISSION_DENIED"}}]`, Auth},
		{"xAI", `{"code":"x","error":"y"} and a 402 body {"error":{"code":402,"message":"z"}}`, UsageLimit},
		{"OpenRouter raw", `{"error":{"message":"Provider returned error","code":502,"metadata":{"raw":"{\"error\":{\"type\":\"authentication_error\"}}"}}}`, Auth},
		{"quoted as a JSON string", `"{\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}"`, ProviderError},
	} {
		if got := readText(c.text); got.Class != c.class {
			t.Errorf("%s: %s (%s), want %s", c.name, got.Class, got.Why(), c.class)
		}
	}
}

// An HTTP status is read wherever a text writes it, and no number that is
// not one is taken for one.
func TestStatusInText(t *testing.T) {
	for text, want := range map[string]int{
		"API Error: 529 Overloaded":                           529,
		"API Error (503 upstream connect error":               503,
		"Error code: 429 - {}":                                429,
		"exceeded retry limit, last status: 401 Unauthorized": 401,
		"Streaming response failed: [503] The request queue":  503,
		"429 The engine is currently overloaded":              429,
		`402 "Your team has used all available credits"`:      402,
		"HTTP 401:Request blocked by upstream provider":       401,
		"Error: 400 {\"type\":\"error\"}":                     400,
		"unexpected status 503 Service Unavailable: x":        503,
		"Tokens per Minute (actual/limit): 65605/16000":       0,
		"resets 11:30am, attempt 4/10, request id 9a5793386e": 0,
		"Please include the request ID cfaf2c7c-7a57 in it.":  0,
	} {
		if got := statusInText(text); got != want {
			t.Errorf("%q: %d, want %d", text, got, want)
		}
	}
}

// When signals disagree the one that would not retry wins, and the
// signals are kept; a text that denies a usage limit does not claim one;
// a rate, context or step limit is no usage limit.
func TestFailureDecides(t *testing.T) {
	var s failureSignals
	s.code("error", "rate_limit")
	s.setStatus("apiErrorStatus", 429)
	s.text("message", "You've hit your session limit")
	f := readFailure(s)
	if f.Class != UsageLimit || f.Rule != ruleWording || f.Field != "message" || len(f.Signals) != 3 || f.SignalsNote() == "" {
		t.Errorf("limit under a 429: %+v", f)
	}
	for text, want := range map[string]Class{
		"Server is temporarily limiting requests (not your usage limit)": ProviderError,
		"Rate limit exceeded. Please wait":                               ProviderError,
		"step limit reached":                                             Unknown,
		"context limit reached":                                          Unknown,
		"Weekly limit reached":                                           UsageLimit,
		"Invalid API key · Please run /login":                            Auth,
		"Request timed out.":                                             ProviderError,
		"API Error: Connection closed mid-response":                      ProviderError,
		"model produced no output":                                       Unknown,
	} {
		if got := readText(text); got.Class != want {
			t.Errorf("%q: %s (%s), want %s", text, got.Class, got.Why(), want)
		}
	}
	// The retryable mark says something only when nothing else does and
	// every code is known.
	s = failureSignals{retryable: "retryable"}
	s.code("kind", "modelError")
	if f := readFailure(s); f.Class != ProviderError || f.Rule != ruleRetryable {
		t.Errorf("retryable alone: %+v", f)
	}
	s.code("kind2", "solarFlare")
	if f := readFailure(s); f.Class != Unknown || f.Shape == "" {
		t.Errorf("retryable beside an unknown code: %+v", f)
	}
}

// A reset time is read from every form docs/failures.md lists; words that
// announce one nudge cannot read are kept as unreadable.
func TestReadResetForms(t *testing.T) {
	defer func(z *time.Location) { wallClockZone = z }(wallClockZone)
	wallClockZone = time.UTC
	ts := time.Date(2026, 8, 19, 13, 40, 0, 0, time.UTC)
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	for _, c := range []struct {
		text   string
		want   time.Time
		unread bool
	}{
		{"Claude AI usage limit reached|1755615600", at("2025-08-19T15:00:00Z"), false},
		{`{"resets_at":1775317531000}`, at("2026-04-04T15:45:31Z"), false},
		{"You will regain access on 2025-06-01 at 00:00 UTC.", at("2025-06-01T00:00:00Z"), false},
		{"resets 2026-08-20T08:00:00+02:00", at("2026-08-20T06:00:00Z"), false},
		{"resets 3pm", at("2026-08-19T15:00:00Z"), false},
		{"resets 1pm", at("2026-08-20T13:00:00Z"), false},
		{"resets 9:50pm (Asia/Saigon)", at("2026-08-19T14:50:00Z"), false},
		{"resets Oct 31, 9am", at("2026-10-31T09:00:00Z"), false},
		{"resets Feb 7, 11am (Asia/Seoul)", at("2027-02-07T02:00:00Z"), false},
		{"resets May 5 at 9pm (America/New_York)", at("2027-05-06T01:00:00Z"), false},
		{"try again at Jul 5th, 2026 8:19 PM.", at("2026-07-05T20:19:00Z"), false},
		{"resets 15:30", at("2026-08-19T15:30:00Z"), false},
		{"Try again in 2 hours.", at("2026-08-19T15:40:00Z"), false},
		{"try again in 1 day 2 hours 30 minutes", at("2026-08-20T16:10:00Z"), false},
		{`"resets_in_seconds":600`, at("2026-08-19T13:50:00Z"), false},
		{"resets Oct 24", time.Time{}, true},
		{"Your limit will reset at ...", time.Time{}, true},
		{"resets 9:50pm (Nowhere/Atlantis)", time.Time{}, true},
		{"no time here", time.Time{}, false},
	} {
		got, unread := readReset(c.text, ts)
		if !got.Equal(c.want) || (unread != "") != c.unread {
			t.Errorf("%q: %v unread %q, want %v unread %v", c.text, got, unread, c.want, c.unread)
		}
	}
	// A wall-clock time needs the record's time; a dated one with its
	// year does not.
	if got, _ := readReset("resets 3pm", time.Time{}); !got.IsZero() {
		t.Errorf("resets 3pm without a record time: %v", got)
	}
}
