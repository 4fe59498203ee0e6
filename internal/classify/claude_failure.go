package classify

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	// Reset times name IANA zones ("resets 9:50pm (Asia/Saigon)"); the
	// embedded database resolves them the same on every machine.
	_ "time/tzdata"
)

// claudeFailure classifies a dead turn from its synthetic error record:
// structured fields first (docs/agents/claude.md §4.2), the text when they are
// missing or say little (§4.3, claudeTextOutranks).
func claudeFailure(r *claudeRecord, ts time.Time) Failure {
	text := r.Message.Content.Text
	if text == "" {
		text = r.Error.Message
	}
	structured, weight := r.structuredClass()
	f := Failure{Code: r.failureCode(), Message: text, Class: claudeDecide(structured, weight, claudeTextClass(text))}
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

// The value sets of docs/agents/claude.md §4.2, by field.
var (
	claudeAuthErrors     = claudeSet("authentication_failed", "oauth_org_not_allowed", "account_on_hold", "verification_required", "cloud_credential_error")
	claudeRejectedErrors = claudeSet("invalid_request", "model_not_found")
	claudeRejectedAPI    = claudeSet("message_over_context_limit", "safety_monitor_blocked", "dlp_request_denied", "pdf_too_large", "pdf_password_protected")
	claudeProviderErrors = claudeSet("server_error", "overloaded", "rate_limit")
	// request_timeout: 2.1.333 writes it on a timeout beside error:"server_error" [seen] (§1).
	claudeProviderAPI = claudeSet("connection_failed", "no_response", "stream_idle_timeout", "request_timeout")
	// Added in 2.1.333 [code] (§1): a client certificate or TLS set-up
	// problem, or an answer that is no API answer at all (a proxy's page).
	// None is known to pass by itself, so they are told, never retried,
	// even beside error:"server_error".
	claudeUncuredAPI = claudeSet("client_certificate", "tls_cert_invalid", "unexpected_response")
	// Anthropic error types (apiErrorType, or the type of an error object):
	// the API's own error names for the same failures.
	claudeAuthTypes     = claudeSet("authentication_error", "permission_error")
	claudeRejectedTypes = claudeSet("invalid_request_error", "not_found_error", "request_too_large")
	claudeProviderTypes = claudeSet("api_error", "overloaded_error")
)

func claudeSet(values ...string) map[string]bool {
	m := make(map[string]bool, len(values))
	for _, v := range values {
		m[v] = true
	}
	return m
}

// claudeWeight is how much the fields' verdict weighs against the text.
type claudeWeight int

const (
	claudeNoFields claudeWeight = iota // none of the fields: the text decides
	claudeBare                         // only the error category, which says little on its own
	claudeFields                       // fields beyond the category
	claudeSettled                      // a code that settles the class whatever the text says
)

// structuredClass applies the table of §4.2, with how much its verdict
// weighs (claudeDecide); "" when the record carries none of its fields (old
// transcripts).
func (r *claudeRecord) structuredClass() (Class, claudeWeight) {
	category, status, typ, api := r.errorCategory(), r.status(), r.errorType(), string(r.APIError)
	rateInfo := r.APIErrorParams.RateLimitInfo
	quota := r.QuotaLimits != nil && r.QuotaLimits.Status == "rejected" || rateInfo != nil && rateInfo.Status == "rejected"
	weight := claudeFields
	if status == 0 && typ == "" && api == "" && !quota && !bool(r.ResendCannotCure) {
		weight = claudeBare
	}
	switch {
	case api == "usage_limit_reached", quota, category == "billing_error":
		return UsageLimit, weight
	case claudeAuthErrors[category], status == 401, status == 403, claudeAuthTypes[typ]:
		return Auth, weight
	case claudeRejectedErrors[category], bool(r.ResendCannotCure), status == 400, status == 404, status == 413,
		claudeRejectedAPI[api], claudeRejectedTypes[typ]:
		return Rejected, weight
	case claudeUncuredAPI[api]:
		return Unknown, claudeSettled
	case claudeProviderErrors[category], claudeProviderAPI[api], status >= 500, claudeProviderTypes[typ]:
		return ProviderError, weight
	case category != "" || status != 0 || typ != "" || api != "":
		return Unknown, weight
	}
	return "", claudeNoFields
}

// claudeTextOutranks says which verdicts of the fields an unambiguous text
// class overrides. Records of versions not captured here (other projects'
// fixtures) show a usage-limit text under a bare `rate_limit` category with
// no quota marker: a usage limit is never retried, so its text outranks a
// provider-error verdict whatever the fields; sign-in and provider-error
// texts outrank only a verdict of nothing known.
var claudeTextOutranks = map[Class][]Class{
	UsageLimit:    {ProviderError, Unknown},
	Auth:          {Unknown},
	ProviderError: {Unknown},
}

// claudeDecide weighs the fields' verdict against the text's: the text
// decides when the fields are missing, when they are a bare category (a
// usage-limit, sign-in or provider-error text is more specific than a
// category alone), and where claudeTextOutranks says so.
func claudeDecide(structured Class, weight claudeWeight, text Class) Class {
	switch {
	case weight == claudeNoFields:
		return text
	case weight == claudeSettled, text == Unknown, text == Rejected:
		return structured
	case weight == claudeBare, slices.Contains(claudeTextOutranks[text], structured):
		return text
	}
	return structured
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

// claudeTextRules are the text fallbacks of §4.3, in order; no match is
// unknown. Each is unambiguous: it names one cause and nothing else.
var claudeTextRules = []struct {
	class Class
	re    *regexp.Regexp
}{
	{UsageLimit, regexp.MustCompile(`(?i)credit balance is too low|claude ai usage limit reached\|\d{10}|you['’]ve (hit|reached) your (\S+ )?(usage )?limit|usage limit reached|your limit will reset at`)},
	{Auth, regexp.MustCompile(`(?i)please run /login|invalid api key|not logged in|login expired|oauth token (has expired|revoked)|failed to authenticate|invalid auth token|authentication required`)},
	{Rejected, regexp.MustCompile(`(?i)^prompt is too long|invalid_request_error`)},
	// A stalled or idle stream ("API Error: Stream idle timeout - partial
	// response received", public reports) is the provider going quiet.
	{ProviderError, regexp.MustCompile(`(?i)^api error: (5\d\d|529|connection|overloaded)|^request timed out|server is temporarily limiting requests|repeated 529 overloaded errors|\bstream(ing)? (idle timeout|stalled|was idle|went idle)\b|\bstalled stream\b`)},
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
