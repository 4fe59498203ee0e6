package classify

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"
	"time"
	// Reset times name IANA zones ("resets 9:50pm (Asia/Saigon)"); the
	// embedded database resolves them the same on every machine.
	_ "time/tzdata"
)

// Reading a usage limit's reset time from its text, in every form the
// agents and providers write it (docs/failures.md, "Reset times"): Unix
// seconds, an ISO date and time, a wall-clock time with or without a date
// and a zone ("resets 3pm", "resets Oct 31, 9am (Europe/Paris)"), or a
// wait ("try again in 2 hours"). A time without a zone is on the clock of
// the machine that ran the agent, which is the one nudge runs on.

// wallClockZone is the zone of a reset time that names none (a variable so
// that tests can fix it).
var wallClockZone = time.Local

// resetSlack allows for the minutes the CLIs drop when they print a reset
// time ("11:56am" for 11:56:56): a printed time up to this much before the
// record is still today's, not tomorrow's.
const resetSlack = time.Minute

var (
	// resetEpoch is "…usage limit reached|1755615600" (Claude Code 1.0.x)
	// and a body's "resets_at":1775317531 (seconds or milliseconds).
	resetEpoch = regexp.MustCompile(`(?i)limit reached\|(\d{10})\b|\bresets?_?at\\?"?\s*[:=]\s*(\d{10,13})\b`)
	// resetInSeconds is a body's "resets_in_seconds":602705.
	resetInSeconds = regexp.MustCompile(`(?i)\bresets_in_seconds\\?"?\s*:\s*(\d{1,9})\b`)
	// resetISO is "2025-06-01 at 00:00 UTC", "2026-05-01T01:40:29Z".
	resetISO = regexp.MustCompile(`(\d{4})-(\d{2})-(\d{2})(?:T| at | )(\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?\s*(Z|UTC|GMT|[+-]\d{2}:?\d{2})?`)
	// resetClock is a wall-clock time after the words that introduce a
	// reset, with an optional date before it and a zone after it.
	resetClock = regexp.MustCompile(`(?i)\b(?:resets?|reset at|resets at|will reset at|try again at|regain access (?:on|at))\s+` +
		`(?:([a-z]{3})[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?,?(?: (\d{4}))?,?\s+(?:at\s+)?)?` +
		`(\d{1,2})(?::(\d{2}))?\s?(am|pm)?(?:\s*\(([^)]{1,40})\)|\s+(UTC|GMT)\b)?`)
	// resetWait is "try again in 5 days 22 hours 11 minutes", "in 3 hours".
	resetWait = regexp.MustCompile(`(?i)\b(?:in|after)\s+((?:\d{1,4}\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)`)
	// resetWaitPart is one number and unit of a wait.
	resetWaitPart = regexp.MustCompile(`(?i)(\d{1,4})\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b`)
	// resetWords introduce a reset time; with none readable after them the
	// reset is said to be unreadable.
	resetWords = regexp.MustCompile(`(?i)\bresets?\b|\breset at\b|\bwill (?:reset|be refreshed)\b|\btry again (?:at|in)\b|\bregain access\b`)
)

// readReset reads a usage limit's reset time from text, relative to the
// record's time ts. When the text speaks of a reset but no form above
// reads it, unread quotes the words.
func readReset(text string, ts time.Time) (at time.Time, unread string) {
	if len(text) > failureTextMax {
		text = text[:failureTextMax]
	}
	if m := resetEpoch.FindStringSubmatch(text); m != nil {
		n, _ := strconv.ParseInt(m[1]+m[2], 10, 64)
		if n > maxEpochSeconds {
			return msTime(n).UTC(), ""
		}
		return time.Unix(n, 0).UTC(), ""
	}
	if m := resetISO.FindStringSubmatch(text); m != nil {
		if t, ok := isoReset(m); ok {
			return t, ""
		}
	}
	if m := resetClock.FindStringSubmatch(text); m != nil && (m[6] != "" || m[5] != "") {
		if t, ok := clockReset(m, ts); ok {
			return t, ""
		}
	}
	if m := resetWait.FindStringSubmatch(text); m != nil && !ts.IsZero() {
		if d, ok := waitDuration(m[1]); ok {
			return ts.Add(d).UTC().Truncate(time.Second), ""
		}
	}
	if m := resetInSeconds.FindStringSubmatch(text); m != nil && !ts.IsZero() {
		n, _ := strconv.Atoi(m[1])
		return ts.Add(time.Duration(n) * time.Second).UTC().Truncate(time.Second), ""
	}
	if loc := resetWords.FindStringIndex(text); loc != nil {
		end := min(len(text), loc[1]+40)
		for end < len(text) && !utf8Start(text[end]) {
			end++
		}
		return time.Time{}, strings.TrimSpace(text[loc[0]:end])
	}
	return time.Time{}, ""
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// isoReset reads a resetISO match.
func isoReset(m []string) (time.Time, bool) {
	loc := wallClockZone
	switch z := strings.ToUpper(m[7]); {
	case z == "Z" || z == "UTC" || z == "GMT":
		loc = time.UTC
	case z != "":
		off, err := time.Parse("-07:00", z[:3]+":"+strings.TrimPrefix(z[3:], ":"))
		if err != nil {
			return time.Time{}, false
		}
		_, secs := off.Zone()
		loc = time.FixedZone(z, secs)
	}
	y, mo, d, h, mi := atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4]), atoi(m[5])
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(mo), d, h, mi, atoi(m[6]), 0, loc).UTC(), true
}

// clockReset reads a resetClock match: its next occurrence after ts, or
// the date it names.
func clockReset(m []string, ts time.Time) (time.Time, bool) {
	loc := wallClockZone
	if z := cmp.Or(m[7], m[8]); z != "" {
		l, err := time.LoadLocation(z)
		if err != nil {
			return time.Time{}, false
		}
		loc = l
	}
	hour, min := atoi(m[4]), atoi(m[5])
	if m[6] != "" {
		h, ok := clock12(m[4], m[5], m[6])
		if !ok {
			return time.Time{}, false
		}
		hour = h
	} else if hour > 23 || min > 59 {
		return time.Time{}, false
	}
	var month time.Month
	day := 0
	if m[1] != "" {
		mt, err := time.Parse("Jan", strings.ToUpper(m[1][:1])+strings.ToLower(m[1][1:]))
		day = atoi(m[2])
		if err != nil || day < 1 || day > 31 {
			return time.Time{}, false
		}
		month = mt.Month()
		if m[3] != "" {
			return time.Date(atoi(m[3]), month, day, hour, min, 0, 0, loc).UTC(), true
		}
	}
	if ts.IsZero() {
		return time.Time{}, false
	}
	t := nextWallClock(ts, loc, month, day, hour, min)
	return t, !t.IsZero()
}

// waitDuration adds up a wait's parts.
func waitDuration(s string) (time.Duration, bool) {
	var d time.Duration
	for _, p := range resetWaitPart.FindAllStringSubmatch(s, 6) {
		n := time.Duration(atoi(p[1]))
		switch u := strings.ToLower(p[2]); {
		case strings.HasPrefix(u, "d"):
			d += n * 24 * time.Hour
		case strings.HasPrefix(u, "h"):
			d += n * time.Hour
		case strings.HasPrefix(u, "m"):
			d += n * time.Minute
		default:
			d += n * time.Second
		}
	}
	return d, d > 0 && d <= maxRetryAfter
}

// clock12 turns "9", "50", "pm" into 21; minutes are checked, not returned.
func clock12(h, min, ampm string) (int, bool) {
	hour, err := strconv.Atoi(h)
	if err != nil || hour < 1 || hour > 12 || atoi(min) > 59 {
		return 0, false
	}
	hour %= 12
	if strings.EqualFold(ampm, "pm") {
		hour += 12
	}
	return hour, true
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// nextWallClock is the first hour:min in loc (on month/day when month is
// set) not earlier than after minus resetSlack.
func nextWallClock(after time.Time, loc *time.Location, month time.Month, day, hour, min int) time.Time {
	local := after.In(loc)
	from := after.Add(-resetSlack)
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
