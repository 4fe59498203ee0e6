package classify

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	// Reset times name IANA zones ("resets 9:50pm (Asia/Saigon)"); the
	// embedded database resolves them the same on every machine.
	_ "time/tzdata"
)

// claudeFailure classifies a dead turn from its synthetic error record:
// structured fields first (formats/claude.md §4.2), text only when they are
// missing (§4.3).
func claudeFailure(r *claudeRecord, ts time.Time) Failure {
	text := r.Message.Content.Text
	f := Failure{Code: r.failureCode(), Message: text, Class: r.structuredClass()}
	if f.Class == "" {
		f.Class = claudeTextClass(text)
	}
	switch f.Class {
	case UsageLimit:
		f.ResetAt = r.quotaReset()
		if f.ResetAt.IsZero() {
			f.ResetAt = claudeTextReset(text, ts)
		}
	case Auth:
		f.Hint = claudeLoginHint
	}
	return f
}

// errorCategory is the record's `error` field when it is a string.
func (r *claudeRecord) errorCategory() string {
	return claudeString(r.Error)
}

// failureCode is a compact structured code: the finer apiError when given,
// else the error category with the HTTP status ("server_error/500").
func (r *claudeRecord) failureCode() string {
	if r.APIError != "" {
		return r.APIError
	}
	code := r.errorCategory()
	if r.APIErrorStatus != 0 {
		if code == "" {
			code = "http"
		}
		code += "/" + strconv.Itoa(r.APIErrorStatus)
	}
	return code
}

// The value sets of formats/claude.md §4.2.
var (
	claudeAuthErrors     = claudeSet("authentication_failed", "oauth_org_not_allowed", "account_on_hold", "verification_required", "cloud_credential_error")
	claudeRejectedErrors = claudeSet("invalid_request", "model_not_found")
	claudeRejectedAPI    = claudeSet("message_over_context_limit", "safety_monitor_blocked", "dlp_request_denied", "pdf_too_large", "pdf_password_protected")
	claudeProviderErrors = claudeSet("server_error", "overloaded", "rate_limit")
	claudeProviderAPI    = claudeSet("connection_failed", "no_response", "stream_idle_timeout")
)

func claudeSet(values ...string) map[string]bool {
	m := make(map[string]bool, len(values))
	for _, v := range values {
		m[v] = true
	}
	return m
}

// structuredClass applies the table of §4.2, or returns "" when the record
// carries none of its fields (old transcripts): then the text decides.
func (r *claudeRecord) structuredClass() Class {
	category, status := r.errorCategory(), r.APIErrorStatus
	rateInfo := r.APIErrorParams.RateLimitInfo
	switch {
	case r.APIError == "usage_limit_reached",
		r.QuotaLimits != nil && r.QuotaLimits.Status == "rejected",
		rateInfo != nil && rateInfo.Status == "rejected",
		category == "billing_error":
		return UsageLimit
	case claudeAuthErrors[category], status == 401, status == 403:
		return Auth
	case claudeRejectedErrors[category], r.ResendCannotCure, status == 400, status == 404, status == 413, claudeRejectedAPI[r.APIError]:
		return Rejected
	case claudeProviderErrors[category], claudeProviderAPI[r.APIError], status >= 500:
		return ProviderError
	case category != "" || status != 0 || r.APIError != "":
		return Unknown
	}
	return ""
}

// quotaReset is quotaLimits.resetsAt, else rate_limit_info.resetsAt, in
// Unix seconds (§8.1).
func (r *claudeRecord) quotaReset() time.Time {
	for _, q := range []*claudeQuota{r.QuotaLimits, r.APIErrorParams.RateLimitInfo} {
		if q != nil && q.ResetsAt > 0 {
			return time.Unix(int64(q.ResetsAt), 0).UTC()
		}
	}
	return time.Time{}
}

// claudeTextRules are the text fallbacks of §4.3, in order; no match is unknown.
var claudeTextRules = []struct {
	class Class
	re    *regexp.Regexp
}{
	{UsageLimit, regexp.MustCompile(`(?i)credit balance is too low|claude ai usage limit reached\|\d{10}|you['’]ve hit your (\S+ )?limit|usage limit reached|your limit will reset at`)},
	{Auth, regexp.MustCompile(`(?i)please run /login|invalid api key|not logged in|login expired|oauth token (has expired|revoked)|failed to authenticate|invalid auth token|authentication required`)},
	{Rejected, regexp.MustCompile(`(?i)^prompt is too long|invalid_request_error`)},
	{ProviderError, regexp.MustCompile(`(?i)^api error: (5\d\d|529|connection|overloaded)|^request timed out|server is temporarily limiting requests|repeated 529 overloaded errors`)},
}

func claudeTextClass(text string) Class {
	text = strings.TrimSpace(text)
	for _, rule := range claudeTextRules {
		if rule.re.MatchString(text) {
			return rule.class
		}
	}
	return Unknown
}

var (
	// claudeLegacyReset is the 1.0.x text "Claude AI usage limit reached|<epoch seconds>" (§1, §8.1).
	claudeLegacyReset = regexp.MustCompile(`(?i)usage limit reached\|(\d{10})`)
	// claudeResetText is "resets 9:50pm (Asia/Saigon)", "resets Feb 7, 11am (Asia/Seoul)",
	// "Your limit will reset at 5pm (Europe/Warsaw)" (§4.3).
	claudeResetText = regexp.MustCompile(`(?i)(?:resets|reset at) (?:([a-z]{3}) (\d{1,2}), )?(\d{1,2})(?::(\d{2}))?\s?(am|pm) \(([^)]+)\)`)
)

// claudeTextReset reads a reset time from an error text: the legacy epoch,
// else a wall-clock time in a named zone resolved as its next occurrence
// after the record's time ts (§8.1). Zero when the text gives none.
func claudeTextReset(text string, ts time.Time) time.Time {
	if m := claudeLegacyReset.FindStringSubmatch(text); m != nil {
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		return time.Unix(sec, 0).UTC()
	}
	m := claudeResetText.FindStringSubmatch(text)
	if m == nil || ts.IsZero() {
		return time.Time{}
	}
	loc, err := time.LoadLocation(m[6])
	if err != nil {
		return time.Time{}
	}
	var month time.Month
	var day int
	if m[1] != "" {
		mt, err := time.Parse("Jan", strings.ToUpper(m[1][:1])+strings.ToLower(m[1][1:]))
		if err != nil {
			return time.Time{}
		}
		month = mt.Month()
		day, _ = strconv.Atoi(m[2])
	}
	hour, ok := claudeClock12(m[3], m[4], m[5])
	if !ok {
		return time.Time{}
	}
	return claudeNextWallClock(ts, loc, month, day, hour, claudeAtoi(m[4]))
}

// claudeClock12 turns "9", "50", "pm" into 21; minutes are checked, not returned.
func claudeClock12(h, min, ampm string) (int, bool) {
	hour, err := strconv.Atoi(h)
	if err != nil || hour < 1 || hour > 12 || claudeAtoi(min) > 59 {
		return 0, false
	}
	hour %= 12
	if strings.EqualFold(ampm, "pm") {
		hour += 12
	}
	return hour, true
}

func claudeAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// claudeResetSlack allows for the minutes the CLI drops when it prints a
// reset time ("11:56am" for 11:56:56): a printed time up to this much before
// the record is still today's, not tomorrow's.
const claudeResetSlack = time.Minute

// claudeNextWallClock is the first hour:min in loc (on month/day when month is
// set) not earlier than after minus claudeResetSlack.
func claudeNextWallClock(after time.Time, loc *time.Location, month time.Month, day, hour, min int) time.Time {
	local := after.In(loc)
	from := after.Add(-claudeResetSlack)
	if month == 0 {
		t := time.Date(local.Year(), local.Month(), local.Day(), hour, min, 0, 0, loc)
		if t.Before(from) {
			t = time.Date(local.Year(), local.Month(), local.Day()+1, hour, min, 0, 0, loc)
		}
		return t.UTC()
	}
	if day < 1 || day > 31 {
		return time.Time{}
	}
	t := time.Date(local.Year(), month, day, hour, min, 0, 0, loc)
	if t.Before(from) {
		t = time.Date(local.Year()+1, month, day, hour, min, 0, 0, loc)
	}
	return t.UTC()
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
	hour, ok := claudeClock12(m[1], m[2], m[3])
	if !ok {
		return time.Time{}
	}
	return claudeNextWallClock(ts, loc, 0, 0, hour, claudeAtoi(m[2]))
}
