package classify

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// openCodeFailure classifies the error that ended a turn at ts by the
// shared reading (docs/failures.md): its name, status code, the typed code
// of its response body, its message and body (docs/agents/opencode.md §6.3).
func openCodeFailure(e *openCodeError, ts time.Time) Failure {
	d := e.Data
	bodyCode := openCodeBodyCode(d.ResponseBody)
	var s failureSignals
	s.code("name", e.Name)
	s.code("data.responseBody error.code", bodyCode)
	s.setStatus("data.statusCode", d.StatusCode)
	s.text("data.message", d.Message)
	s.text("data.responseBody", d.ResponseBody)
	if d.IsRetryable {
		s.retryable = "data.isRetryable"
	}
	f := readFailure(s)
	f.Message, f.Code = d.Message, e.Name
	if d.StatusCode != 0 {
		f.Code += "/" + strconv.Itoa(d.StatusCode)
	}
	if bodyCode != "" {
		f.Code += "/" + bodyCode
	}
	switch f.Class {
	case Auth:
		f.Hint = openCodeLoginHint
	case UsageLimit:
		f.ResetAt = openCodeRetryAfter(d.ResponseHeaders)
		if f.ResetAt.IsZero() {
			f.ResetAt, f.ResetUnread = readReset(d.Message+"\n"+d.ResponseBody, ts)
		}
	}
	return f
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
