package mcp

import (
	"time"

	"nudge/internal/classify"
	"nudge/internal/explain"
	"nudge/internal/retry"
	"nudge/internal/status"
)

// Outcomes of a session's last turn, as a parent agent reads them.
const (
	OutcomeDone         = "done"          // the turn completed
	OutcomeFailed       = "failed"        // the turn died and nudge will not (or no longer) continue it
	OutcomeUsageLimited = "usage_limited" // the turn hit a usage limit; see reset_at
	OutcomeWorking      = "working"       // the turn is under way
	OutcomeRetrying     = "retrying"      // the turn died from a provider error and nudge is continuing it
	OutcomeUnknown      = "unknown"       // nothing is known of a turn yet
	OutcomeTimeout      = "timeout"       // wait gave up before the turn ended
)

// Turn is the last turn of a session: whether it ended and how, with the
// original error text of a dead turn. A failed turn is never "done".
type Turn struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
	Project string `json:"project"`
	// State is nudge's state of the session (finished, failed, gave_up, …).
	State string `json:"state"`
	// Ended is true when the turn is over: done, failed or usage-limited.
	Ended   bool   `json:"ended"`
	Outcome string `json:"outcome"`
	// Class, Code and ErrorText describe the dead turn (failed, retrying,
	// usage_limited): the cause nudge classified and the agent's own text.
	Class     string `json:"class,omitempty"`
	Code      string `json:"code,omitempty"`
	ErrorText string `json:"error_text,omitempty"`
	// ResetAt is when a usage limit resets, if the agent said.
	ResetAt *time.Time `json:"reset_at,omitempty"`
	// RetryAt is when nudge sends its next continuation.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	// EndedAt is when the turn ended, by the agent's record.
	EndedAt *time.Time `json:"ended_at,omitempty"`
	// Attempts counts the continuations nudge sent since the last completed turn.
	Attempts int    `json:"attempts"`
	Note     string `json:"note,omitempty"`
}

// turnEnds are the event kinds that end a turn.
var turnEnds = map[string]bool{
	string(classify.TurnDone): true, string(classify.TurnFailed): true, string(classify.UsageLimited): true,
}

// lastTurn reads the last turn of session s from its timeline.
func lastTurn(s status.Session, tl explain.Timeline) Turn {
	t := Turn{Session: s.Session, Agent: s.Agent, Project: s.Project, State: s.State, Note: s.Note, RetryAt: s.RetryAt, ResetAt: s.ResetAt}
	var end *explain.Event
	for i := range tl.Events {
		if turnEnds[tl.Events[i].Kind] {
			end = &tl.Events[i]
		}
	}
	var doneAt time.Time
	for _, e := range tl.Events {
		if e.Kind == string(classify.TurnDone) {
			doneAt = eventTime(e)
		}
	}
	for _, a := range tl.Attempts {
		if a.Status == "sent" && a.Started.After(doneAt) {
			t.Attempts++
		}
	}
	if end != nil {
		at := eventTime(*end)
		t.EndedAt = &at
		if end.Kind != string(classify.TurnDone) {
			t.Class, t.Code, t.ErrorText = end.Class, end.Code, end.Message
			if end.Kind == string(classify.UsageLimited) && t.Class == "" {
				t.Class = string(classify.UsageLimit)
			}
			if t.ResetAt == nil {
				t.ResetAt = end.ResetAt
			}
		}
	}
	switch retry.State(s.State) {
	case retry.Finished:
		t.Outcome, t.Ended = OutcomeDone, true
		t.Class, t.Code, t.ErrorText = "", "", ""
	case retry.Failed, retry.GaveUp, retry.NeedsSignIn, retry.Cancelled:
		t.Outcome, t.Ended = OutcomeFailed, true
	case retry.UsageLimit:
		t.Outcome, t.Ended = OutcomeUsageLimited, true
	case retry.Retrying, retry.WaitingBox, retry.WaitingYou, retry.WaitingProvider:
		t.Outcome = OutcomeRetrying
	case retry.Working:
		t.Outcome = OutcomeWorking
		t.Class, t.Code, t.ErrorText, t.EndedAt = "", "", "", nil
	default:
		t.Outcome = OutcomeUnknown
	}
	if t.Outcome == OutcomeFailed && t.Class == "" {
		t.Class = string(classify.Unknown)
	}
	return t
}

// endedAfter reports whether t ended after since (any time, when since is zero).
func (t Turn) endedAfter(since time.Time) bool {
	if !t.Ended {
		return false
	}
	return since.IsZero() || t.EndedAt != nil && t.EndedAt.After(since)
}

// eventTime is when an event happened: the record's own time, else when
// nudge read it.
func eventTime(e explain.Event) time.Time {
	if e.Time != nil {
		return *e.Time
	}
	return e.DetectedAt
}
