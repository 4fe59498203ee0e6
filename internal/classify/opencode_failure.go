package classify

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// openCodeFailure classifies the error that ended a turn (docs/agents/opencode.md
// §6.3): the error name, the status code and the typed code in the response
// body first; the message text only as a fallback.
func openCodeFailure(e *openCodeError) Failure {
	d := e.Data
	bodyCode := openCodeBodyCode(d.ResponseBody)
	f := Failure{Message: d.Message, Code: e.Name}
	if d.StatusCode != 0 {
		f.Code += "/" + strconv.Itoa(d.StatusCode)
	}
	if bodyCode != "" {
		f.Code += "/" + bodyCode
	}
	text := strings.ToLower(d.Message)
	quota := openCodeQuota(bodyCode, d.ResponseBody, text)
	switch e.Name {
	case "MessageAbortedError":
		f.Class = Cancelled
	case "ProviderAuthError":
		f.Class = Auth
	case "ContextOverflowError", "ContentFilterError":
		f.Class = Rejected
	case "MessageOutputLengthError", "StructuredOutputError":
		f.Class = Unknown
	case "APIError":
		f.Class = openCodeAPIClass(d.StatusCode, bodyCode, quota, d.IsRetryable, d.Message)
	case "UnknownError":
		f.Class = Unknown
		if openCodeTransient(text) {
			f.Class = ProviderError
		}
	default:
		f.Class = Unknown
	}
	switch f.Class {
	case Auth:
		f.Hint = openCodeLoginHint
	case UsageLimit:
		f.ResetAt = openCodeRetryAfter(d.ResponseHeaders)
	}
	return f
}

// openCodeAPIClass classifies an APIError.
func openCodeAPIClass(status int, code string, quota, retryable bool, message string) Class {
	switch {
	case status == 401:
		return Auth
	case status == 402, status == 403 && quota, status == 429 && quota:
		return UsageLimit
	case status == 403:
		return Auth
	case status == 429, status >= 500:
		return ProviderError
	case strings.HasPrefix(message, "Unauthorized:"), strings.HasPrefix(message, "Forbidden:"):
		// A gateway's or proxy's HTML 401/403 (§6.3).
		return Auth
	case status >= 400:
		return Rejected
	case quota:
		return UsageLimit
	case code == "invalid_prompt":
		return Rejected
	case retryable, openCodeTransient(strings.ToLower(message)):
		return ProviderError
	}
	return Unknown
}

// openCodeBodyCode is the provider's typed code in a response body: OpenAI's
// {"error":{"code","type"}}, OpenCode Zen's {"error":{"type"}}.
func openCodeBodyCode(body string) string {
	if body == "" {
		return ""
	}
	var b struct {
		Error struct {
			Code json.RawMessage `json:"code"`
			Type string          `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &b) != nil {
		return ""
	}
	var code string
	if json.Unmarshal(b.Error.Code, &code) == nil && code != "" {
		return code
	}
	return b.Error.Type
}

// openCodeQuotaMarks name a plan, quota or billing limit in a body or code (§6.3, §9.4).
var openCodeQuotaMarks = []string{"FreeUsageLimitError", "GoUsageLimitError", "insufficient_quota", "usage_not_included", "billing_not_active"}

func openCodeQuota(code, body, text string) bool {
	for _, m := range openCodeQuotaMarks {
		if code == m || strings.Contains(body, m) {
			return true
		}
	}
	code = strings.ToLower(code)
	if strings.Contains(code, "quota") || strings.Contains(code, "billing") {
		return true
	}
	for _, w := range []string{"quota", "usage limit", "billing", "credit"} {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// openCodeTransientText are the phrases OpenCode's own retry treats as
// transient (§5, session/retry.ts).
var openCodeTransientText = []string{
	"429", "500", "502", "503", "504", "524", "rate limit", "too many requests", "too_many_requests",
	"overloaded", "service unavailable", "unavailable", "internal server error", "internal error",
	"provider returned error", "connection refused", "connection reset", "connection lost", "socket hang up",
	"econnreset", "etimedout", "getaddrinfo", "timeout", "timed out", "try your request again",
	"resource exhausted", "exhausted", "try again later", "at capacity",
}

func openCodeTransient(text string) bool {
	for _, w := range openCodeTransientText {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// maxRetryAfter bounds a provider's retry-after: no quota window is longer
// than a year, and a larger header is noise, not a reset time to show.
const maxRetryAfter = 366 * 24 * time.Hour

// openCodeRetryAfter is the reset time a quota answer names: retry-after-ms
// or retry-after, relative to its date header (§6.3); zero when absent.
func openCodeRetryAfter(h map[string]string) time.Time {
	get := func(k string) string {
		for name, v := range h {
			if strings.EqualFold(name, k) {
				return v
			}
		}
		return ""
	}
	date, err := parseHTTPTime(get("date"))
	if err != nil {
		return time.Time{}
	}
	// after is date plus n units, or zero when that is not a believable wait
	// (it would also overflow a time.Duration).
	after := func(n float64, unit time.Duration) time.Time {
		if n*float64(unit) > float64(maxRetryAfter) {
			return time.Time{}
		}
		return date.Add(time.Duration(n * float64(unit))).UTC()
	}
	if ms, err := strconv.ParseFloat(get("retry-after-ms"), 64); err == nil && ms > 0 {
		return after(ms, time.Millisecond)
	}
	v := get("retry-after")
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return after(s, time.Second)
	}
	if t, err := parseHTTPTime(v); err == nil {
		return t.UTC()
	}
	return time.Time{}
}

// httpTimeLayouts are the date forms HTTP allows (RFC 9110 §5.6.7): the
// preferred IMF-fixdate, then the obsolete RFC 850 and asctime forms.
var httpTimeLayouts = []string{"Mon, 02 Jan 2006 15:04:05 GMT", time.RFC850, time.ANSIC}

// parseHTTPTime reads a date header value in any of the forms HTTP allows,
// as net/http's ParseTime does.
func parseHTTPTime(v string) (t time.Time, err error) {
	for _, layout := range httpTimeLayouts {
		if t, err = time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}
