package classify

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// codexError is task_complete.error (docs/agents/codex.md §3.1, §4.2).
type codexError struct {
	Message string          `json:"message"`
	Info    json.RawMessage `json:"codex_error_info"`
}

// name normalises codex_error_info, a string ("internal_server_error") or a
// one-key object ({"http_connection_failed":{"http_status_code":503}}), to
// a snake_case name and an HTTP status (0: none).
func (e *codexError) name() (string, int) {
	var s string
	if json.Unmarshal(e.Info, &s) == nil {
		return codexSnake(s), 0
	}
	var obj map[string]struct {
		Status *int `json:"http_status_code"`
	}
	if json.Unmarshal(e.Info, &obj) != nil || len(obj) != 1 {
		return "", 0
	}
	for k, v := range obj {
		status := 0
		if v.Status != nil {
			status = *v.Status
		}
		return codexSnake(k), status
	}
	return "", 0
}

// codexSnake turns the camelCase names the binary also carries
// ("usageLimitExceeded") into their snake_case form (§4.2).
func codexSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// The name sets of §4.2.
var (
	codexLimitNames    = claudeSet("usage_limit_exceeded", "usage_not_included", "quota_exceeded")
	codexRejectedNames = claudeSet("context_window_exceeded", "bad_request", "model_not_found", "cyber_policy")
	codexServerNames   = claudeSet("internal_server_error", "server_overloaded", "response_stream_connection_failed", "response_stream_disconnected")
	codexHTTPNames     = claudeSet("http_connection_failed", "response_too_many_failed_attempts")
)

var (
	// codexLimitText is the usage-limit text of 0.171.0 (typographic
	// apostrophe) and 0.98.0 (straight) (§4.2).
	codexLimitText = regexp.MustCompile(`(?i)you['’]ve hit your usage limit|quota exceeded`)
	// codexServerText are the messages of name "other" that are provider failures (§4.2 row 4).
	codexServerText = regexp.MustCompile(`(?i)^(stream disconnected before completion|exceeded retry limit|unexpected status 5|selected model is at capacity)`)
)

// codexFailure classifies a dead turn by §4.2: structured fields first,
// the message only where the table names it. limitReset is the reset of a
// full rate-limit window seen in the turn, ts the record's time.
func codexFailure(e *codexError, limitReset time.Time, ts time.Time) Failure {
	name, status := e.name()
	return codexClass(name, status, e.Message, limitReset, ts)
}

// codexClass applies the table of §4.2 to an error's name, HTTP status (0:
// none) and message.
func codexClass(name string, status int, message string, limitReset, ts time.Time) Failure {
	f := Failure{Code: name, Message: message}
	if status != 0 {
		f.Code += "/" + strconv.Itoa(status)
	}
	switch {
	case codexLimitNames[name] || codexLimitText.MatchString(message):
		f.Class = UsageLimit
		f.ResetAt = limitReset
		if f.ResetAt.IsZero() {
			f.ResetAt = codexTextReset(message, ts, time.Local)
		}
	case name == "unauthorized" || status == 401 || status == 403:
		f.Class, f.Hint = Auth, codexLoginHint
	case codexRejectedNames[name] || status == 400 || status == 404 || status == 413 || status == 422:
		f.Class = Rejected
	case codexServerNames[name],
		codexHTTPNames[name] && (status >= 500 || status == 429 || status == 0),
		name == "other" && codexServerText.MatchString(strings.TrimSpace(message)):
		f.Class = ProviderError
	default:
		f.Class = Unknown
	}
	return f
}

// codexRateLimits is token_count.rate_limits (§3.1, §6).
type codexRateLimits struct {
	Primary   *codexWindow `json:"primary"`
	Secondary *codexWindow `json:"secondary"`
}

type codexWindow struct {
	UsedPercent     float64  `json:"used_percent"`
	ResetsAt        *float64 `json:"resets_at"`         // Unix seconds
	ResetsInSeconds *float64 `json:"resets_in_seconds"` // older versions: relative to the record
}

// fullReset reports whether a window is full (used_percent ≥ 100) and the
// latest reset among the full ones (zero when none gives one) (§6 rule 1).
func (rl *codexRateLimits) fullReset(ts time.Time) (time.Time, bool) {
	var reset time.Time
	full := false
	for _, w := range []*codexWindow{rl.Primary, rl.Secondary} {
		if w == nil || w.UsedPercent < 100 {
			continue
		}
		full = true
		var at time.Time
		switch {
		case w.ResetsAt != nil && *w.ResetsAt > 0 && *w.ResetsAt < 1e11:
			at = time.Unix(int64(*w.ResetsAt), 0).UTC()
		case w.ResetsInSeconds != nil && *w.ResetsInSeconds >= 0 && *w.ResetsInSeconds < 1e9 && !ts.IsZero():
			at = ts.Add(time.Duration(*w.ResetsInSeconds * float64(time.Second))).UTC().Truncate(time.Second)
		}
		if at.After(reset) {
			reset = at
		}
	}
	return reset, full
}

// codexResetText is "… try again at 9:55 AM." or "… try again at Nov 30th,
// 2026 9:55 AM." (§6 rule 2).
var codexResetText = regexp.MustCompile(`(?i)try again at (?:([a-z]{3})[a-z]* (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}) )?(\d{1,2}):(\d{2})\s?(am|pm)`)

// codexTextReset reads the wall-clock reset from a usage-limit message: a
// time in the local zone of the machine that ran Codex (nudge runs on that
// machine), taken as its next occurrence after the record's time ts.
func codexTextReset(msg string, ts time.Time, loc *time.Location) time.Time {
	m := codexResetText.FindStringSubmatch(msg)
	if m == nil || ts.IsZero() {
		return time.Time{}
	}
	hour, ok := claudeClock12(m[4], m[5], m[6])
	if !ok {
		return time.Time{}
	}
	min := claudeAtoi(m[5])
	if m[1] == "" {
		return claudeNextWallClock(ts, loc, 0, 0, hour, min)
	}
	month, err := time.Parse("Jan", strings.ToUpper(m[1][:1])+strings.ToLower(m[1][1:]))
	day := claudeAtoi(m[2])
	if err != nil || day < 1 || day > 31 {
		return time.Time{}
	}
	return time.Date(claudeAtoi(m[3]), month.Month(), day, hour, min, 0, 0, loc).UTC()
}
