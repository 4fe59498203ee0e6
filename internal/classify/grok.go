package classify

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Grok CLI writes no record of a failed turn (docs/agents/grok.md §1, §2). What
// nudge reads instead are the records of grok-dev's hooks (≥ 1.1.5, §3):
// `nudge hook grok`, set as the command of the UserPromptSubmit, Stop and
// StopFailure hooks, appends each hook's stdin, with the time it came and
// the session's reply count in grok.db, to <grok home>/nudge/hooks/<session>.jsonl.

const grokName = "grok"

// grokLoginHint is docs/agents/grok.md §3's fix for an auth failure.
const grokLoginHint = "fix GROK_API_KEY, or apiKey in ~/.grok/user-settings.json"

func init() {
	register(Agent{
		Name:  grokName,
		Title: "Grok CLI",
		// docs/agents/grok.md §2, §3: Grok writes no failure anywhere; `nudge hook grok`
		// appends grok-dev's hook input beside its grok.db, one file per session.
		Home:      Home{Dir: ".grok"},
		Files:     []FileSet{{Pattern: grokHooksDir + "/*.jsonl", Kind: JSONLines}},
		NewReader: func(path string, _ Files) Reader { return newGrokReader(path) },
		Recognize: recognizeGrok,
		LoginHint: grokLoginHint,
		Blind: "a failed Grok turn ends as finished: nudge cannot see Grok's failures unless its StopFailure hook " +
			"is set to feed nudge (grok-dev ≥ 1.1.5: `nudge hook grok` as the UserPromptSubmit, Stop and StopFailure " +
			"hook; @vibe-kit/grok-cli has no hooks); Grok has no hook for its approval prompts, so its boxes stay unseen",
		Executables: []string{"grok"},
		// docs/agents/grok.md §2, §3: UserPromptSubmit and Stop carry the
		// session's reply count in grok.db, so that a Stop without a
		// reply can be told from a finished turn.
		Hook: &Hook{
			EventVar:   "GROK_HOOK_EVENT",
			CountDB:    "grok.db",
			CountQuery: `SELECT count(*) FROM messages WHERE session_id = ? AND role = 'assistant'`,
			Record:     grokHookRecord,
		},
		// docs/agents/grok.md §2: grok.db's sessions.id, of no documented shape.
		SessionID: regexp.MustCompile(anyIDPattern),
		// Grok speaks to xAI (docs/agents/grok.md).
		Provider: "xai",
	})
}

// grokHooksDir is the folder under Grok's home where `nudge hook grok`
// writes and the daemon reads.
const grokHooksDir = "nudge/hooks"

// recognizeGrok knows a hook record file by its place or its first record.
func recognizeGrok(path string, head []byte) bool {
	if filepath.Ext(path) == ".jsonl" && strings.HasSuffix(filepath.ToSlash(filepath.Dir(path)), "/"+grokHooksDir) &&
		strings.Contains(filepath.ToSlash(path), "/.grok/") {
		return true
	}
	return bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte(`{"received_at":"`)) &&
		bytes.Contains(head, []byte(`"hook_event_name"`))
}

// grokRecord is one line `nudge hook grok` wrote.
type grokRecord struct {
	ReceivedAt string `json:"received_at"`
	// Event is $GROK_HOOK_EVENT, for input without hook_event_name.
	Event string `json:"event,omitempty"`
	// Replies is the count of the session's assistant messages in grok.db
	// when the hook ran (UserPromptSubmit and Stop; absent when unreadable).
	Replies *int `json:"replies,omitempty"`
	// Input is the hook's stdin, verbatim.
	Input json.RawMessage `json:"input"`
}

// grokHookInput is the hook's stdin (docs/agents/grok.md §3).
type grokHookInput struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	UserPrompt    string          `json:"user_prompt"`
	Error         json.RawMessage `json:"error"`
}

// grokReader reads one session's hook records.
type grokReader struct {
	session string
	project string
	ended   bool // the current turn already ended: Stop after StopFailure adds nothing
	replies *int // grok.db's reply count at the turn's UserPromptSubmit
}

func newGrokReader(path string) *grokReader {
	return &grokReader{session: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
}

// Read classifies one hook record by the table of docs/agents/grok.md §3.
func (g *grokReader) Read(line []byte) []Event {
	var r grokRecord
	var in grokHookInput
	if !decodeRecord(line, &r) || !decodeRecord(r.Input, &in) {
		return nil
	}
	if in.SessionID != "" {
		g.session = in.SessionID
	}
	if in.Cwd != "" {
		g.project = in.Cwd
	}
	ts, _ := time.Parse(time.RFC3339Nano, r.ReceivedAt)
	hook := in.HookEventName
	if hook == "" {
		hook = r.Event
	}
	switch hook {
	case "UserPromptSubmit":
		g.ended, g.replies = false, r.Replies
		e := g.event(UserMessage, ts)
		e.Text = in.UserPrompt
		return []Event{e, g.event(TurnStarted, ts)}
	case "StopFailure":
		if g.ended {
			return nil
		}
		g.ended = true
		f := grokFailure(grokErrorText(in.Error), ts)
		e := g.event(TurnFailed, ts)
		e.Failure = &f
		return []Event{e}
	case "Stop":
		if g.ended {
			return nil
		}
		g.ended = true
		if g.replies != nil && r.Replies != nil && *r.Replies <= *g.replies {
			// Nothing was written for the turn: Grok keeps no error, so
			// nothing says it was the provider (docs/agents/grok.md §3).
			e := g.event(TurnFailed, ts)
			e.Failure = &Failure{Class: Unknown, Code: "no_reply", Message: "Grok ended the turn without a reply; Grok records no error"}
			return []Event{e}
		}
		return []Event{g.event(TurnDone, ts)}
	case "PreToolUse", "PostToolUse", "PostToolUseFailure":
		return []Event{g.event(AgentActivity, ts)}
	}
	return nil
}

func (g *grokReader) event(k Kind, ts time.Time) Event {
	return Event{Agent: grokName, Session: g.session, Project: g.project, Time: ts, Kind: k}
}

// grokErrorText is StopFailure's error: a string (docs/agents/grok.md §3), or the JSON
// of whatever else came.
func grokErrorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// grokStatusTexts are grok-dev's fixed texts per HTTP status, used when the
// provider body has no message (docs/agents/grok.md §3). An exact match is as
// good as the status itself.
var grokStatusTexts = map[string]int{
	"The request was invalid. This may be caused by an unsupported parameter or model.":  400,
	"Authentication failed. Your API key may be invalid or expired.":                     401,
	"Access denied. Your API key does not have permission for this request.":             403,
	"The requested model or endpoint was not found. Check your model name and base URL.": 404,
	"The request timed out. Please try again.":                                           408,
	"The request could not be processed. Check your message format or parameters.":       422,
	"Rate limit exceeded. Please wait a moment and try again.":                           429,
	"The API server encountered an internal error. Please try again later.":              500,
	"The API server is temporarily unavailable. Please try again later.":                 502,
	"The API service is temporarily overloaded. Please try again later.":                 503,
	"The API service is overloaded. Please try again later.":                             529,
}

// grokFailure classifies StopFailure's error text at ts by the shared
// reading (docs/failures.md).
func grokFailure(text string, ts time.Time) Failure {
	var s failureSignals
	status, fixed := grokStatusTexts[strings.TrimSpace(text)]
	if fixed {
		s.setStatus("error (grok-dev's text for the status)", status)
	}
	s.text("error", text)
	f := readFailure(s)
	f.Message = text
	if fixed {
		f.Code = "http/" + strconv.Itoa(status)
	}
	switch f.Class {
	case Auth:
		f.Hint = grokLoginHint
	case UsageLimit:
		f.ResetAt, f.ResetUnread = readReset(text, ts)
	}
	return f
}
