// Package classify turns the raw records an agent writes into typed session events.
package classify

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Kind is what a record says happened in a session.
type Kind string

// The event kinds of docs/behaviour.md §8. AgentIdle is the live-registry signal that the
// agent sits at an empty prompt (docs/design.md: "idle events").
const (
	TurnStarted   Kind = "turn_started"
	UserMessage   Kind = "user_message"
	AgentActivity Kind = "agent_activity"
	AgentRetrying Kind = "agent_retrying"
	TurnDone      Kind = "turn_done"
	TurnFailed    Kind = "turn_failed"
	BoxOpened     Kind = "box_opened"
	BoxClosed     Kind = "box_closed"
	UsageLimited  Kind = "usage_limited"
	AgentIdle     Kind = "agent_idle"
)

// Kinds are the event kinds, each with its words (TestVocabulary).
var Kinds = []Kind{TurnStarted, UserMessage, AgentActivity, AgentRetrying, TurnDone, TurnFailed, BoxOpened, BoxClosed, UsageLimited, AgentIdle}

// kindWords are the event kinds as the person reads them (nudge explain,
// the Inbox window's timeline).
var kindWords = map[Kind]string{
	TurnStarted: "turn started", UserMessage: "message to the agent", AgentActivity: "agent working",
	AgentRetrying: "agent retrying by itself", AgentIdle: "agent idle", TurnDone: "turn finished",
	TurnFailed: "turn failed", BoxOpened: "box opened", BoxClosed: "box closed", UsageLimited: "usage limit",
}

// Words is k as the person reads it; a kind of a later release reads as
// its name.
func (k Kind) Words() string { return wordsOf(kindWords, k) }

// Class is the cause of a dead turn (docs/behaviour.md §2).
type Class string

// The classes of docs/behaviour.md §2.
const (
	ProviderError Class = "provider_error"
	UsageLimit    Class = "usage_limit"
	Auth          Class = "auth"
	Rejected      Class = "rejected"
	Cancelled     Class = "cancelled"
	Unknown       Class = "unknown"
)

// Classes are the failure classes, each with its words (TestVocabulary).
var Classes = []Class{ProviderError, UsageLimit, Auth, Rejected, Cancelled, Unknown}

// classWords are the classes as the person reads them (docs/behaviour.md §2).
var classWords = map[Class]string{
	ProviderError: "provider error", UsageLimit: "usage limit", Auth: "sign-in needed",
	Rejected: "request rejected", Cancelled: "cancelled by the person", Unknown: "error nudge does not recognise",
}

// Words is c as the person reads it; a class of a later release reads as
// its name.
func (c Class) Words() string { return wordsOf(classWords, c) }

// wordsOf is m's words for key, else the key with its underscores as spaces.
func wordsOf[K ~string](m map[K]string, key K) string {
	if w, ok := m[key]; ok {
		return w
	}
	return strings.ReplaceAll(string(key), "_", " ")
}

// Failure describes why a turn died.
type Failure struct {
	Class   Class     `json:"class"`
	Code    string    `json:"code,omitempty"`    // the agent's structured code (status, error type)
	Message string    `json:"message,omitempty"` // the original error text the person saw
	ResetAt time.Time `json:"reset_at,omitzero"` // usage limits: when the agent says the limit resets
	Hint    string    `json:"hint,omitempty"`    // what the person can do (e.g. "run claude /login")
	// ResetUnread quotes a usage limit's reset words that no form of
	// docs/failures.md reads ("resets Oct 24"): the reset is unreadable.
	ResetUnread string `json:"reset_unread,omitempty"`
	// Rule and Field say what decided Class: the rule of docs/failures.md
	// ("error type", "HTTP status", "embedded error body", "wording") and
	// the record's field it read.
	Rule  string `json:"rule,omitempty"`
	Field string `json:"field,omitempty"`
	// Signals are the signals seen when there were several, each
	// "rule "value" in field → class".
	Signals []string `json:"signals,omitempty"`
	// Shape names a failure record nudge does not know: a typed code no
	// table row has, or no field that said anything. "" when known.
	Shape string `json:"shape,omitempty"`
	// Provider is the provider id the turn failed against ("anthropic",
	// Codex's model_provider, OpenCode's providerID), Endpoint the
	// gateway it was reached through and Model the model, where the
	// records say them (provider.go).
	Provider string `json:"provider,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Model    string `json:"model,omitempty"`
}

// excerptMax bounds Excerpt, in characters: a sentence's worth of an error
// text that may be a whole HTML page from a proxy, or 8 MiB from a
// hostile record.
const excerptMax = 300

// Excerpt is Message as a sentence, a notification, a menu line or a log
// line carries it: at most excerptMax characters, cut at a character
// boundary, with how much was left out. The Inbox entry and `nudge
// explain` keep the whole text.
func (f Failure) Excerpt() string {
	m := f.Message
	if len(m) <= excerptMax {
		return m
	}
	n := 0
	for i := range m {
		if n == excerptMax {
			return fmt.Sprintf("%s… (%d more bytes)", m[:i], len(m)-i)
		}
		n++
	}
	return m
}

// The words of Process.Status: what the agent process is doing, in the live
// registry's words (docs/agents/claude.md §7.1), plus StatusExited for a
// process that is gone. Readers write them; the retry machine and the
// daemon read them.
const (
	StatusIdle    = "idle"
	StatusBusy    = "busy"
	StatusWaiting = "waiting" // a question or permission box is open
	StatusExited  = "exited"
)

// Process is what a live registry says about the agent process that holds a
// session: who it is and where it can be typed into.
type Process struct {
	PID      int    `json:"pid"`
	Status   string `json:"status,omitempty"`    // StatusIdle, StatusBusy, StatusWaiting or StatusExited
	Waiting  string `json:"waiting,omitempty"`   // what a box waits for ("permission prompt")
	TmuxPane string `json:"tmux_pane,omitempty"` // e.g. "%3" (no socket)
	Cwd      string `json:"cwd,omitempty"`
}

// Event is one thing that happened in one session, in the agent's own words.
type Event struct {
	Agent   string    `json:"agent"`
	Session string    `json:"session"`
	Project string    `json:"project,omitempty"` // the session's working directory
	Time    time.Time `json:"time"`              // the record's own timestamp (zero when it has none)
	Kind    Kind      `json:"kind"`
	Failure *Failure  `json:"failure,omitempty"` // TurnFailed and UsageLimited
	Text    string    `json:"text,omitempty"`    // UserMessage: what was sent (to recognise nudge's own continuation)
	Box     string    `json:"box,omitempty"`     // BoxOpened/BoxClosed: which box
	// AutoContinue is set on UsageLimited when the agent armed its own
	// continuation after the reset: nudge must yield to it.
	AutoContinue bool     `json:"auto_continue,omitempty"`
	Process      *Process `json:"process,omitempty"` // live-registry events
	// ID is the agent's own identity of what the event reports, where its
	// records carry one: Claude's record uuid, OpenCode's event id, the
	// turn id of a Codex, Muse or Kimi Code event that happens once per
	// turn ("turn <id>", TurnScoped). Empty otherwise: the daemon then
	// identifies the event by its record's bytes (docs/durability.md). The
	// same record always gives the same ID.
	ID string `json:"id,omitempty"`
}

// TurnScoped reports whether e's ID names its turn (one per turn) rather
// than its record.
func (e Event) TurnScoped() bool { return strings.HasPrefix(e.ID, turnIDPrefix) }

// Line is the one-line JSON shape `nudge classify --json` prints (docs/behaviour.md §8).
type Line struct {
	Agent   string  `json:"agent"`
	Session string  `json:"session"`
	Time    *string `json:"time"`
	Kind    Kind    `json:"kind"`
	Class   *Class  `json:"class"`
	Code    *string `json:"code"`
	Message *string `json:"message"`
	ResetAt *string `json:"reset_at"`
}

// MarshalLine renders e in the docs/behaviour.md §8 line shape.
func (e Event) MarshalLine() ([]byte, error) { return json.Marshal(e.Line()) }

// Line is e in the docs/behaviour.md §8 line shape.
func (e Event) Line() Line {
	l := Line{Agent: e.Agent, Session: e.Session, Kind: e.Kind}
	if !e.Time.IsZero() {
		s := e.Time.UTC().Format(time.RFC3339Nano)
		l.Time = &s
	}
	if f := e.Failure; f != nil {
		if e.Kind == TurnFailed {
			c := f.Class
			l.Class = &c
		}
		if f.Code != "" {
			l.Code = &f.Code
		}
		if f.Message != "" {
			l.Message = &f.Message
		}
		if !f.ResetAt.IsZero() {
			s := f.ResetAt.UTC().Format(time.RFC3339)
			l.ResetAt = &s
		}
	}
	return l
}
