package classify

import (
	"cmp"
	"regexp"
	"strconv"
	"time"
)

// claudeFailure classifies a dead turn from its synthetic error record by
// the shared reading (docs/failures.md): its typed fields (docs/agents/claude.md
// §4.2) and its text (§4.3).
func claudeFailure(r *claudeRecord, ts time.Time) Failure {
	text, field := r.Message.Content.Text, "message.content"
	if text == "" {
		text, field = r.Error.Message, "error.message"
	}
	var s failureSignals
	s.code("apiError", string(r.APIError))
	s.code("error", r.errorCategory())
	typeField, statusField := "error.type", "error.status"
	if r.APIErrorType != "" {
		typeField = "apiErrorType"
	}
	if r.APIErrorStatus != 0 {
		statusField = "apiErrorStatus"
	}
	s.code(typeField, r.errorType())
	s.setStatus(statusField, r.status())
	rateInfo := r.APIErrorParams.RateLimitInfo
	switch {
	case r.QuotaLimits != nil && r.QuotaLimits.Status == "rejected":
		s.mark(UsageLimit, "quotaLimits.status", "rejected")
	case rateInfo != nil && rateInfo.Status == "rejected":
		s.mark(UsageLimit, "apiErrorParams.rate_limit_info.status", "rejected")
	}
	if r.ResendCannotCure {
		s.mark(Rejected, "resendCannotCure", "true")
	}
	s.text(field, text)
	f := readFailure(s)
	f.Code, f.Message = r.failureCode(), text
	switch f.Class {
	case UsageLimit:
		f.ResetAt = r.quotaReset()
		if f.ResetAt.IsZero() {
			f.ResetAt, f.ResetUnread = readReset(text, ts)
		}
	case Auth:
		f.Hint = claudeLoginHint
	}
	return f
}

// claudeError is a record's `error` field: the category string of a
// dead-turn marker (§3.2), or an object {type, status, message} as on
// system/api_error records and in records of versions not captured here.
type claudeError struct {
	Category string
	Type     string // an Anthropic error type, "overloaded_error"
	Status   int
	Message  string
}

func (e *claudeError) UnmarshalJSON(b []byte) error {
	*e = claudeError{}
	var s flexString
	if _ = s.UnmarshalJSON(b); s != "" {
		e.Category = string(s)
		return nil
	}
	var o struct {
		Type       flexString `json:"type"`
		Status     flexInt    `json:"status"`
		StatusCode flexInt    `json:"statusCode"`
		Message    flexString `json:"message"`
		Error      *struct {
			Type    flexString `json:"type"`
			Message flexString `json:"message"`
		} `json:"error"`
	}
	if !decodeRecord(b, &o) {
		return nil
	}
	e.Type, e.Message, e.Status = string(o.Type), string(o.Message), int(max(o.Status, o.StatusCode))
	if in := o.Error; in != nil {
		e.Type, e.Message = cmp.Or(e.Type, string(in.Type)), cmp.Or(e.Message, string(in.Message))
	}
	return nil
}

// errorCategory is the record's `error` category, when it is a string.
func (r *claudeRecord) errorCategory() string { return r.Error.Category }

// status is the HTTP status: apiErrorStatus, else the error object's.
func (r *claudeRecord) status() int { return cmp.Or(int(r.APIErrorStatus), r.Error.Status) }

// errorType is the Anthropic error type: apiErrorType, else the error object's.
func (r *claudeRecord) errorType() string { return cmp.Or(string(r.APIErrorType), r.Error.Type) }

// failureCode is the most specific structured code: the finer apiError
// when given, else the error category (or type) with the HTTP status
// ("server_error/500").
func (r *claudeRecord) failureCode() string {
	if r.APIError != "" {
		return string(r.APIError)
	}
	code := cmp.Or(r.errorCategory(), r.errorType())
	if s := r.status(); s != 0 {
		code = cmp.Or(code, "http") + "/" + strconv.Itoa(s)
	}
	return code
}

// quotaReset is quotaLimits.resetsAt, else rate_limit_info.resetsAt, in
// Unix seconds (§8.1).
func (r *claudeRecord) quotaReset() time.Time {
	for _, q := range []*claudeQuota{r.QuotaLimits, r.APIErrorParams.RateLimitInfo} {
		if q != nil && !q.ResetsAt.IsZero() {
			return q.ResetsAt.Time
		}
	}
	return time.Time{}
}

var (
	// claudeArmedText is the native auto-continue notice, "Usage limit reached · set to
	// continue automatically at 9:03am" [seen], "… continuing automatically at 8:10pm · esc
	// or type to cancel" [public] (§4.1 row 13, §8.2).
	claudeArmedText = regexp.MustCompile(`(?i)usage limit reached.*continu\S* automatically at (\d{1,2})(?::(\d{2}))?\s?(am|pm)(?: \(([^)]+)\))?`)
	// claudeFiredText is "Usage limit reset · Continuing automatically" (§4.1 row 14).
	claudeFiredText = regexp.MustCompile(`(?i)^usage limit reset\b.*continuing automatically`)
	// claudeStoppedText is "Automatic continue stopped after repeated usage-limit hits" [public] (§8.2).
	claudeStoppedText = regexp.MustCompile(`(?i)automatic continue stopped`)
)

func claudeAutoContinueArmed(content string) bool   { return claudeArmedText.MatchString(content) }
func claudeAutoContinueFired(content string) bool   { return claudeFiredText.MatchString(content) }
func claudeAutoContinueStopped(content string) bool { return claudeStoppedText.MatchString(content) }

// claudeAutoContinueAt reads the time of an armed auto-continue notice. The
// CLI prints the machine's local wall clock unless it names a zone; nudge
// runs on that machine.
func claudeAutoContinueAt(content string, ts time.Time) time.Time {
	m := claudeArmedText.FindStringSubmatch(content)
	if m == nil || ts.IsZero() {
		return time.Time{}
	}
	loc := time.Local
	if m[4] != "" {
		l, err := time.LoadLocation(m[4])
		if err != nil {
			return time.Time{}
		}
		loc = l
	}
	hour, ok := clock12(m[1], m[2], m[3])
	if !ok {
		return time.Time{}
	}
	return nextWallClock(ts, loc, 0, 0, hour, atoi(m[2]))
}
