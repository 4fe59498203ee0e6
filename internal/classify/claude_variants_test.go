package classify

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Records of versions not captured here: every field may carry another JSON
// type than the one seen, the category may be bare or missing, the error
// may be an object. Each row would be misread by a reader that took the
// 2.1.332 shapes literally.
func TestClaudeFieldVariants(t *testing.T) {
	for _, c := range []struct {
		name, fields, text string
		class              Class
		code               string
		reset              time.Time
	}{
		// A usage-limit text under a bare rate_limit category, no quota marker:
		// never provider_error (it would be retried).
		{"usage text, bare rate_limit", `"error":"rate_limit"`, "You've hit your weekly limit · resets 3pm (UTC)", UsageLimit, "rate_limit",
			time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)},
		{"usage text, rate_limit with 429", `"error":"rate_limit","apiErrorStatus":429`, "Claude usage limit reached. Your limit will reset at 5pm (UTC).", UsageLimit, "rate_limit/429",
			time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)},
		{"usage text, no category", ``, "You've reached your usage limit", UsageLimit, "", time.Time{}},
		{"sign-in text, bare server_error", `"error":"server_error"`, "Please run /login · API Error: 401", Auth, "server_error", time.Time{}},
		{"sign-in text, bare unknown", `"error":"unknown"`, "OAuth token has expired", Auth, "unknown", time.Time{}},
		{"provider text, bare unknown", `"error":"unknown"`, "API Error: 529 Overloaded.", ProviderError, "unknown", time.Time{}},
		{"stream idle text only", ``, "API Error: Stream idle timeout - partial response received", ProviderError, "", time.Time{}},
		{"stalled stream text, bare unknown", `"error":"unknown"`, "The stream stalled and was closed", ProviderError, "unknown", time.Time{}},
		// Fields that say more than a category still decide over a sign-in text.
		{"sign-in text beats a 5xx status", `"error":"server_error","apiErrorStatus":503`, "Not logged in", Auth, "server_error/503", time.Time{}},
		// The error as an object with a status.
		{"error object 529", `"error":{"type":"overloaded_error","status":529,"message":"Overloaded"}`, "", ProviderError, "overloaded_error/529", time.Time{}},
		{"error object 401 as string status", `"error":{"status":"401","message":"invalid x-api-key"}`, "", Auth, "http/401", time.Time{}},
		{"error object nested", `"error":{"error":{"type":"invalid_request_error","message":"prompt is too long"}}`, "", Rejected, "invalid_request_error", time.Time{}},
		{"error object text from message", `"error":{"status":429,"message":"You've hit your 5-hour limit"}`, "", UsageLimit, "http/429", time.Time{}},
		// Other JSON types for the fields seen.
		{"status as string", `"error":"server_error","apiErrorStatus":"500"`, "", ProviderError, "server_error/500", time.Time{}},
		{"status as float", `"apiErrorStatus":502.0`, "", ProviderError, "http/502", time.Time{}},
		{"status as object", `"error":"server_error","apiErrorStatus":{"code":500}`, "", ProviderError, "server_error", time.Time{}},
		{"apiError as number", `"apiError":42`, "", Unknown, "42", time.Time{}},
		{"resendCannotCure as string", `"error":"unknown","resendCannotCure":"true"`, "", Rejected, "unknown", time.Time{}},
		{"quota status and reset as strings", `"error":"rate_limit","quotaLimits":{"status":"rejected","resetsAt":"1796039816"}`, "", UsageLimit, "rate_limit",
			time.Unix(1796039816, 0)},
		{"quota reset in ms", `"apiError":"usage_limit_reached","quotaLimits":{"status":"rejected","resetsAt":1796039816000}`, "", UsageLimit, "usage_limit_reached",
			time.Unix(1796039816, 0)},
		{"quota reset RFC 3339", `"apiError":"usage_limit_reached","quotaLimits":{"status":"rejected","resetsAt":"2026-12-01T04:00:00Z"}`, "", UsageLimit, "usage_limit_reached",
			time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)},
		{"quota as array", `"error":"rate_limit","quotaLimits":["rejected"]`, "You've hit your limit", UsageLimit, "rate_limit", time.Time{}},
		{"category as number", `"error":500`, "", Unknown, "500", time.Time{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := ccFailure(t, ccErrorRecord(c.fields, c.text))
			if f.Class != c.class || f.Code != c.code {
				t.Errorf("failure = %+v, want class %s code %q", f, c.class, c.code)
			}
			if !f.ResetAt.Equal(c.reset) {
				t.Errorf("reset = %v, want %v", f.ResetAt, c.reset)
			}
		})
	}
}

// The marker itself may come as another type: a string flag still marks a
// dead turn, and an error object's message is the text shown.
func TestClaudeMarkerVariants(t *testing.T) {
	for _, flag := range []string{`true`, `"true"`, `1`} {
		rec := `{"type":"assistant","isApiErrorMessage":` + flag + `,"error":{"status":500,"message":"Internal server error"},"message":{"model":"<synthetic>","content":[]},"timestamp":"2026-11-30T08:56:56Z"}`
		f := ccFailure(t, rec)
		if f.Class != ProviderError || f.Message != "Internal server error" {
			t.Errorf("isApiErrorMessage %s: failure = %+v, want provider_error with the object's message", flag, f)
		}
	}
	for _, flag := range []string{`false`, `"false"`, `0`, `null`} {
		rec := `{"type":"assistant","isApiErrorMessage":` + flag + `,"message":{"model":"<synthetic>","content":[{"type":"text","text":"No response requested."}]}}`
		if events := claudeFeed(rec); len(events) != 0 {
			t.Errorf("isApiErrorMessage %s: events = %+v, want none", flag, events)
		}
	}
}

// FuzzClaudeFailure feeds error records built from a category, a status, an
// apiError and a text of any shape: nothing panics, and a record whose
// text or fields say usage limit is never classified as a provider error
// (it would be retried).
func FuzzClaudeFailure(f *testing.F) {
	f.Add(`"rate_limit"`, `429`, `""`, "You've hit your 5-hour limit · resets 3pm (UTC)")
	f.Add(`{"type":"overloaded_error","status":529}`, `"529"`, `"request_timeout"`, "API Error: 529 Overloaded.")
	f.Add(`"server_error"`, `null`, `"tls_cert_invalid"`, "")
	f.Add(`"unknown"`, `500.0`, `42`, "API Error: Stream idle timeout - partial response received")
	f.Fuzz(func(t *testing.T, category, status, apiError, text string) {
		quoted, _ := json.Marshal(text)
		rec := `{"type":"assistant","isApiErrorMessage":true,"error":` + category + `,"apiErrorStatus":` + status +
			`,"apiError":` + apiError + `,"message":{"model":"<synthetic>","content":[{"type":"text","text":` + string(quoted) + `}]}}`
		for _, e := range claudeFeed(rec) {
			if e.Kind != TurnFailed {
				continue
			}
			if e.Failure == nil {
				t.Fatalf("turn_failed without failure: %+v", e)
			}
			usageText := readFailure(failureSignals{texts: []signalField{{"text", text}}}).Class == UsageLimit
			usageField := strings.Contains(apiError, "usage_limit_reached") || strings.Contains(category, "billing_error")
			if (usageText || usageField) && e.Failure.Class == ProviderError {
				t.Fatalf("a usage limit classified provider_error: %s → %+v", rec, e.Failure)
			}
		}
	})
}
