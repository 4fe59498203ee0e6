package classify

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// codexError is task_complete.error (docs/agents/codex.md §3.1, §4.2).
type codexError struct {
	Message string          `json:"message"`
	Info    json.RawMessage `json:"codex_error_info"`
	// InfoCamel is the same field in the app-server protocol's camelCase
	// ("codexErrorInfo":"internalServerError"), as other versions write it.
	InfoCamel json.RawMessage `json:"codexErrorInfo"`
}

// name normalises codex_error_info, a string ("internal_server_error") or a
// one-key object ({"http_connection_failed":{"http_status_code":503}}), to
// a snake_case name and an HTTP status (0: none).
func (e *codexError) name() (string, int) {
	info := e.Info
	if len(info) == 0 {
		info = e.InfoCamel
	}
	var s string
	if json.Unmarshal(info, &s) == nil {
		return codexSnake(s), 0
	}
	var obj map[string]struct {
		Status   *int `json:"http_status_code"`
		StatusCC *int `json:"httpStatusCode"`
	}
	if json.Unmarshal(info, &obj) != nil || len(obj) != 1 {
		return "", 0
	}
	for k, v := range obj {
		status := 0
		if v.Status != nil {
			status = *v.Status
		} else if v.StatusCC != nil {
			status = *v.StatusCC
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

// codexFailure classifies a dead turn by §4.2: structured fields first,
// the message only where the table names it. limitReset is the reset of a
// full rate-limit window seen in the turn, ts the record's time.
func codexFailure(e *codexError, limitReset time.Time, ts time.Time) Failure {
	name, status := e.name()
	return codexClass(name, status, e.Message, limitReset, ts)
}

// codexClass reads an error's name, HTTP status (0: none) and message by
// the shared reading (docs/failures.md); the reset is the full rate-limit
// window's, else the message's.
func codexClass(name string, status int, message string, limitReset, ts time.Time) Failure {
	var s failureSignals
	s.code("codex_error_info", name)
	s.setStatus("codex_error_info.http_status_code", status)
	s.text("message", message)
	f := readFailure(s)
	f.Code, f.Message = name, message
	if status != 0 {
		f.Code += "/" + strconv.Itoa(status)
	}
	switch f.Class {
	case UsageLimit:
		f.ResetAt = limitReset
		if f.ResetAt.IsZero() {
			f.ResetAt, f.ResetUnread = readReset(message, ts)
		}
	case Auth:
		f.Hint = codexLoginHint
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
