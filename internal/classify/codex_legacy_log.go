package classify

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"time"
)

// Codex 0.98 writes no error record in its rollout, but its TUI writes the
// error that ended a turn to $CODEX_HOME/log/codex-tui.log, one line named
// by the session's thread id (docs/agents/codex.md §4.3):
//
//	2026-12-01T16:41:00.281859Z  INFO session_loop{thread_id=<id>}: codex_core::codex: Turn error: <message>
//
// The message is the text the TUI shows, and may go on over the following
// lines. The log is not tailed: the 0.98 TUI adds a line to it every
// second while it runs, so following it would wake nudge every second. The
// rollout reader reads its end, through its Files, only when it judges a
// quiet legacy turn.

const (
	// codexLogName is the TUI's log, relative to the Codex root.
	codexLogName = "log/codex-tui.log"
	// codexLogTail is how much of the log's end is read: minutes of the
	// TUI's lines, far more than lie between a turn's start and its error.
	codexLogTail = 256 << 10
	// codexLogQuiet is how long a legacy turn's rollout stays unchanged
	// before its log is looked at.
	codexLogQuiet = 5 * time.Second
)

var (
	// codexLogTurnError is a Turn error line: its time, thread id and message.
	codexLogTurnError = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z) +[A-Z]+ +session_loop\{thread_id=([^}]*)\}: codex_core::codex: Turn error: (.*)$`)
	// codexLogStamp starts every line of the log but a message's continuation.
	codexLogStamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}`)
)

// codexTurnError is the error a Turn error line gives a turn.
type codexTurnError struct {
	at      time.Time
	message string
}

// codexLogFind finds in the end of a log the first Turn error of thread
// written at or after since. The log's first line may be cut by the tail
// and is never a match.
func codexLogFind(log []byte, thread string, since time.Time) (codexTurnError, bool) {
	var found codexTurnError
	in := false // the lines read belong to the error found
	for line := range bytes.SplitSeq(log, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if in {
			if !codexLogStamp.Match(line) {
				found.message += "\n" + string(line)
				continue
			}
			break
		}
		m := codexLogTurnError.FindSubmatch(line)
		if m == nil || string(m[2]) != thread {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, string(m[1]))
		if err != nil || at.Before(since) {
			continue
		}
		found, in = codexTurnError{at: at, message: string(m[3])}, true
	}
	found.message = string(bytes.TrimSpace([]byte(found.message)))
	return found, in && found.message != ""
}

// codexLegacyNames name the errors of 0.98 by the start of the text it
// shows for them, in the names of §4.2.
var codexLegacyNames = []struct {
	text *regexp.Regexp
	name string
}{
	{regexp.MustCompile(`^We['’]re currently experiencing high demand`), "internal_server_error"},
	{regexp.MustCompile(`^stream disconnected before completion`), "response_stream_disconnected"},
	{regexp.MustCompile(`^Connection failed`), "response_stream_connection_failed"},
	{regexp.MustCompile(`^Codex ran out of room in the model['’]s context window`), "context_window_exceeded"},
	{regexp.MustCompile(`^To use Codex with your ChatGPT plan`), "usage_not_included"},
	{regexp.MustCompile(`^Quota exceeded`), "quota_exceeded"},
	{regexp.MustCompile(`^You['’]ve hit your usage limit`), "usage_limit_exceeded"},
}

var (
	// codexLegacyStatus is "unexpected status 503 Service Unavailable: …".
	codexLegacyStatus = regexp.MustCompile(`^unexpected status (\d{3})\b`)
	// codexLegacyRetries is "exceeded retry limit, last status: 429 …".
	codexLegacyRetries = regexp.MustCompile(`^exceeded retry limit, last status: (\d{3})\b`)
)

// codexLegacyFailure classifies the message of a 0.98 Turn error by the
// table of §4.2; at is the log line's time.
func codexLegacyFailure(message string, limitReset, at time.Time) Failure {
	name, status := "other", 0
	if m := codexLegacyStatus.FindStringSubmatch(message); m != nil {
		name, status = "http_connection_failed", atoi(m[1])
	} else if m := codexLegacyRetries.FindStringSubmatch(message); m != nil {
		name, status = "response_too_many_failed_attempts", atoi(m[1])
	} else if n, ok := codexLegacyBody(message); ok {
		name = n
	} else {
		for _, l := range codexLegacyNames {
			if l.text.MatchString(message) {
				name = l.name
				break
			}
		}
	}
	return codexClass(name, status, message, limitReset, at)
}

// codexLegacyBody names a provider's error body that 0.98 shows as it came
// ({"error":{"code":…,"type":…}}, a refused request).
func codexLegacyBody(message string) (string, bool) {
	var body struct {
		Error *struct {
			Code flexString `json:"code"`
			Type flexString `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(message), &body) != nil || body.Error == nil {
		return "", false
	}
	switch {
	case body.Error.Code == "context_length_exceeded":
		return "context_window_exceeded", true
	case body.Error.Type == "invalid_request_error":
		return "bad_request", true
	}
	return "other", true
}

// codexRoot is the Codex root of a rollout at
// <root>/sessions/YYYY/MM/DD/rollout-….jsonl (§2), or "".
func codexRoot(path string) string {
	day := filepath.Dir(path)
	sessions := filepath.Dir(filepath.Dir(filepath.Dir(day)))
	if filepath.Base(sessions) != "sessions" {
		return ""
	}
	return filepath.Dir(sessions)
}
