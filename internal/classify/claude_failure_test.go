package classify

import (
	"testing"
	"time"
)

// ccErrorRecord is a synthetic error record with the given extra fields and text.
func ccErrorRecord(fields, text string) string {
	if fields != "" {
		fields += ","
	}
	return `{"type":"assistant","isApiErrorMessage":true,` + fields + `"message":{"model":"<synthetic>","stop_reason":"stop_sequence","content":[{"type":"text","text":"` + text + `"}]},"timestamp":"2026-11-30T08:56:56.708Z"}`
}

func ccFailure(t *testing.T, record string) *Failure {
	t.Helper()
	events := claudeFeed(record)
	if len(events) != 1 || events[0].Kind != TurnFailed || events[0].Failure == nil {
		t.Fatalf("events = %+v, want one turn_failed", events)
	}
	return events[0].Failure
}

func TestClaudeStructuredClasses(t *testing.T) {
	for _, c := range []struct {
		name, fields, text string
		class              Class
		code               string
	}{
		{"500", `"error":"server_error","apiErrorStatus":500,"apiErrorType":"api_error"`, "API Error: 500 Internal server error.", ProviderError, "server_error/500"},
		{"529 as server_error", `"error":"server_error","apiErrorStatus":529`, "API Error: 529 Overloaded.", ProviderError, "server_error/529"},
		{"connection reset", `"error":"server_error","apiError":"connection_failed"`, "API Error: Connection dropped (ECONNRESET).", ProviderError, "connection_failed"},
		{"timeout", `"error":"server_error"`, "Request timed out.", ProviderError, "server_error"},
		{"429 api key", `"error":"rate_limit","apiErrorStatus":429,"apiErrorIsTransient":false`, "API Error: Request rejected (429) · This request would exceed the rate limit", ProviderError, "rate_limit/429"},
		{"stream idle", `"apiError":"stream_idle_timeout"`, "", ProviderError, "stream_idle_timeout"},
		{"bare 503", `"apiErrorStatus":503`, "", ProviderError, "http/503"},
		{"usage limit", `"error":"rate_limit","apiErrorStatus":429,"apiError":"usage_limit_reached"`, "You've hit your 5-hour limit", UsageLimit, "usage_limit_reached"},
		{"quota rejected", `"error":"rate_limit","apiErrorStatus":429,"quotaLimits":{"status":"rejected"}`, "", UsageLimit, "rate_limit/429"},
		{"rate_limit_info rejected", `"error":"rate_limit","apiErrorParams":{"rate_limit_info":{"status":"rejected"}}`, "", UsageLimit, "rate_limit"},
		{"credit", `"error":"billing_error","apiErrorStatus":400,"resendCannotCure":true`, "Credit balance is too low", UsageLimit, "billing_error/400"},
		{"401", `"error":"authentication_failed","apiErrorStatus":401`, "Invalid API key · Fix external API key", Auth, "authentication_failed/401"},
		{"403", `"error":"authentication_failed","apiErrorStatus":403`, "Failed to authenticate. API Error: 403", Auth, "authentication_failed/403"},
		{"org not allowed", `"error":"oauth_org_not_allowed"`, "", Auth, "oauth_org_not_allowed"},
		{"prompt too long", `"error":"invalid_request","apiErrorStatus":400`, "Prompt is too long", Rejected, "invalid_request/400"},
		{"model not found", `"error":"model_not_found","apiErrorStatus":404`, "", Rejected, "model_not_found/404"},
		{"resend cannot cure", `"error":"unknown","resendCannotCure":true`, "", Rejected, "unknown"},
		{"context limit", `"apiError":"message_over_context_limit"`, "", Rejected, "message_over_context_limit"},
		{"unknown", `"error":"unknown"`, "the field says unknown", Unknown, "unknown"},
		// 2.1.333: the finer apiError is the code shown (docs/agents/claude.md §1).
		{"request timeout 2.1.333", `"error":"server_error","apiError":"request_timeout"`, "Request timed out.", ProviderError, "request_timeout"},
		{"request timeout alone", `"apiError":"request_timeout"`, "", ProviderError, "request_timeout"},
		{"client certificate", `"error":"server_error","apiError":"client_certificate"`, "API Error: Connection error.", Unknown, "client_certificate"},
		{"tls cert invalid", `"error":"server_error","apiError":"tls_cert_invalid"`, "", Unknown, "tls_cert_invalid"},
		{"unexpected response", `"error":"server_error","apiError":"unexpected_response"`, "", Unknown, "unexpected_response"},
		{"max tokens", `"error":"max_output_tokens"`, "", Unknown, "max_output_tokens"},
		// Fields decide over text.
		// Signals disagree: the one that does not retry wins (docs/failures.md).
		{"sign-in text over a 5xx category", `"error":"server_error","apiErrorStatus":500`, "Invalid API key", Auth, "server_error/500"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := ccFailure(t, ccErrorRecord(c.fields, c.text))
			if f.Class != c.class || f.Code != c.code || f.Message != c.text {
				t.Errorf("failure = %+v, want class %s code %s", f, c.class, c.code)
			}
			if (f.Hint == claudeLoginHint) != (c.class == Auth) {
				t.Errorf("hint = %q for class %s", f.Hint, f.Class)
			}
			if c.class == UsageLimit && !f.ResetAt.IsZero() {
				t.Errorf("reset %v without a reset field or text", f.ResetAt)
			}
		})
	}
}

func TestClaudeQuotaReset(t *testing.T) {
	// quotaLimits wins over rate_limit_info and over the text.
	f := ccFailure(t, ccErrorRecord(`"error":"rate_limit","apiError":"usage_limit_reached","apiErrorParams":{"rate_limit_info":{"status":"rejected","resetsAt":1796000000}},"quotaLimits":{"status":"rejected","resetsAt":1796039816}`,
		"You've hit your 5-hour limit · resets 3pm (UTC)"))
	if want := time.Unix(1796039816, 0); !f.ResetAt.Equal(want) {
		t.Errorf("reset = %v, want %v", f.ResetAt, want)
	}
	f = ccFailure(t, ccErrorRecord(`"apiError":"usage_limit_reached","apiErrorParams":{"rate_limit_info":{"status":"rejected","resetsAt":1796039816}}`, ""))
	if want := time.Unix(1796039816, 0); !f.ResetAt.Equal(want) {
		t.Errorf("rate_limit_info reset = %v, want %v", f.ResetAt, want)
	}
	// Without reset fields the text gives it.
	f = ccFailure(t, ccErrorRecord(`"apiError":"usage_limit_reached"`, "You've hit your 5-hour limit · resets 11:56am (UTC)"))
	if want := time.Date(2026, 11, 30, 11, 56, 0, 0, time.UTC); !f.ResetAt.Equal(want) {
		t.Errorf("text reset = %v, want %v", f.ResetAt, want)
	}
}

func TestClaudeTextFallbacks(t *testing.T) {
	for text, class := range map[string]Class{
		"Credit balance is too low":                               UsageLimit,
		"Claude AI usage limit reached|1796039816":                UsageLimit,
		"You've hit your limit · resets Feb 7, 11am (Asia/Seoul)": UsageLimit,
		"You’ve hit your weekly limit":                            UsageLimit,
		"5-hour usage limit reached":                              UsageLimit,
		"Your limit will reset at 5pm (Europe/Warsaw).":           UsageLimit,
		"Invalid API key · Please run /login":                     Auth,
		"Not logged in":                                           Auth,
		"OAuth token has expired":                                 Auth,
		"OAuth token revoked":                                     Auth,
		"Failed to authenticate. API Error: 401":                  Auth,
		"Prompt is too long · the request is ~250000 tokens":      Rejected,
		`API Error: 400 {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\"}}`: Rejected,
		"API Error: 500 Internal server error.":                                              ProviderError,
		`API Error: 500 {\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}`:             ProviderError,
		"API Error: 529 Overloaded.":                                                         ProviderError,
		"API Error: Connection closed mid-response":                                          ProviderError,
		"API Error: Overloaded":                                                              ProviderError,
		"Request timed out. If the API is slow to answer":                                    ProviderError,
		"API Error: Server is temporarily limiting requests (not your usage limit)":          ProviderError,
		"Repeated 529 Overloaded errors":                                                     ProviderError,
		"Something odd happened":                                                             Unknown,
		"":                                                                                   Unknown,
	} {
		if f := ccFailure(t, ccErrorRecord("", text)); f.Class != class {
			t.Errorf("%q: class %s, want %s", text, f.Class, class)
		}
	}
}

func TestClaudeTextReset(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		text, record, want string
	}{
		// 9:50pm in Asia/Saigon (UTC+7) is 14:50 UTC: later that day.
		{"You've hit your limit · resets 9:50pm (Asia/Saigon)", "2026-11-30T10:00:00Z", "2026-11-30T14:50:00Z"},
		// Already past today: tomorrow.
		{"You've hit your limit · resets 9:50pm (Asia/Saigon)", "2026-11-30T15:00:00Z", "2026-12-01T14:50:00Z"},
		// A date already past this year: next year.
		{"You've hit your limit · resets Feb 7, 11am (Asia/Seoul)", "2026-11-30T10:00:00Z", "2027-02-07T02:00:00Z"},
		{"You've hit your limit · resets feb 7, 11am (Asia/Seoul)", "2027-01-30T10:00:00Z", "2027-02-07T02:00:00Z"},
		{"Your limit will reset at 5pm (Europe/Warsaw).", "2026-07-01T10:00:00Z", "2026-07-01T15:00:00Z"},
		{"resets 12am (UTC)", "2026-11-30T10:00:00Z", "2026-12-01T00:00:00Z"},
		{"resets 12:30pm (UTC)", "2026-11-30T10:00:00Z", "2026-11-30T12:30:00Z"},
		// The printed minute is truncated: 11:56am printed at 11:56:30 is today.
		{"resets 11:56am (UTC)", "2026-11-30T11:56:30Z", "2026-11-30T11:56:00Z"},
		{"Claude AI usage limit reached|1796039816", "2026-11-30T10:00:00Z", "2026-11-30T11:56:56Z"},
		{"resets 9:50pm (Nowhere/Atlantis)", "2026-11-30T10:00:00Z", ""},
		{"resets 13pm (UTC)", "2026-11-30T10:00:00Z", ""},
		{"resets 9:50pm (UTC)", "", ""},
		{"no time here", "2026-11-30T10:00:00Z", ""},
	} {
		var ts time.Time
		if c.record != "" {
			ts = at(c.record)
		}
		got, _ := readReset(c.text, ts)
		want := time.Time{}
		if c.want != "" {
			want = at(c.want)
		}
		if !got.Equal(want) {
			t.Errorf("%q at %s: %v, want %v", c.text, c.record, got, want)
		}
	}
}

func TestClaudeAutoContinueNotice(t *testing.T) {
	limit := ccErrorRecord(`"error":"rate_limit","apiError":"usage_limit_reached","quotaLimits":{"status":"rejected","resetsAt":1796029422}`, "You've hit your 5-hour limit · resets 9:03am (UTC)")
	armed := `{"type":"system","subtype":"informational","content":"Usage limit reached · set to continue automatically at 9:03am","level":"notice","timestamp":"2026-11-30T09:02:02.512Z"}`
	events := claudeFeed(ccTyped, limit, armed)
	claudeSameKinds(t, events, UserMessage, TurnStarted, TurnFailed, UsageLimited)
	e := events[3]
	if !e.AutoContinue || e.Failure == nil || e.Failure.Class != UsageLimit || !e.Failure.ResetAt.Equal(time.Unix(1796029422, 0)) {
		t.Errorf("usage_limited = %+v %+v", e, e.Failure)
	}
	// Without the limit record, a zone in the notice resolves its time.
	zoned := `{"type":"system","subtype":"informational","content":"Usage limit reached · continuing automatically at 8:10pm (Europe/Berlin) · esc or type to cancel","timestamp":"2026-11-30T09:00:00Z"}`
	events = claudeFeed(zoned)
	claudeSameKinds(t, events, UsageLimited)
	if want := time.Date(2026, 11, 30, 19, 10, 0, 0, time.UTC); !events[0].AutoContinue || !events[0].Failure.ResetAt.Equal(want) {
		t.Errorf("zoned notice: %+v reset %v, want %v", events[0], events[0].Failure.ResetAt, want)
	}
	// A reset from an earlier turn is not carried into a new one.
	events = claudeFeed(limit, ccTyped, zoned)
	if got := events[len(events)-1].Failure.ResetAt; got.Equal(time.Unix(1796029422, 0)) {
		t.Errorf("stale reset %v carried over", got)
	}
	stopped := `{"type":"system","subtype":"informational","content":"Automatic continue stopped after repeated usage-limit hits","timestamp":"2026-11-30T09:10:00Z"}`
	events = claudeFeed(stopped)
	claudeSameKinds(t, events, UsageLimited)
	if events[0].AutoContinue {
		t.Error("a stopped auto-continue is still armed")
	}
	other := `{"type":"system","subtype":"informational","content":"Something else","timestamp":"2026-11-30T09:10:00Z"}`
	claudeSameKinds(t, claudeFeed(other))
}
