// Package status is the picture of the daemon that the CLI, the menu and the
// Inbox window show: the daemon itself, its settings and the watched sessions.
package status

import (
	"fmt"
	"strings"
	"time"
)

// Status is what `nudge status --json` prints (docs/behaviour.md §8).
type Status struct {
	Daemon   *Daemon   `json:"daemon"`   // nil when no daemon is running
	Settings *Settings `json:"settings"` // nil when no daemon is running
	Sessions []Session `json:"sessions"`
	// Outages are the providers' outages that last (docs/behaviour.md §9).
	Outages []Outage `json:"outages,omitempty"`
}

// Outage is one provider's outage while it lasts.
type Outage struct {
	Provider string    `json:"provider"` // the provider id
	Title    string    `json:"title"`    // as people write it ("Anthropic")
	Since    time.Time `json:"since"`
	Sessions int       `json:"sessions"` // the sessions it holds
	Waiting  int       `json:"waiting"`  // those waiting for it
}

// Line says it in a line, as the menu shows it: "Anthropic failing since
// 10:42 · 5 sessions waiting".
func (o Outage) Line() string {
	n := fmt.Sprintf("%d sessions", o.Waiting)
	if o.Waiting == 1 {
		n = "1 session"
	}
	return fmt.Sprintf("%s failing since %s · %s waiting", o.Title, o.Since.Local().Format("15:04"), n)
}

// Daemon describes the running daemon.
type Daemon struct {
	PID          int       `json:"pid"`
	Version      string    `json:"version"`
	StartedAt    time.Time `json:"started_at"`
	Ready        bool      `json:"ready"` // the first scan of every root is done and stored
	FilesWatched int       `json:"files_watched"`
	FilesOpen    int       `json:"files_open"`
	// LinesSkipped counts the lines skipped since start (no JSON record,
	// binary, over the line cap); SkippedFiles are the files they were in,
	// the latest first.
	LinesSkipped int           `json:"lines_skipped"`
	SkippedFiles []SkippedFile `json:"skipped_files"`
	// StoreFailing is set while the database refuses to store what was read.
	StoreFailing *StoreFailing `json:"store_failing,omitempty"`
	// Stuck are the sources that cannot be read now: an agent's host that
	// does not answer, a file or folder whose reading fails.
	Stuck []Stuck `json:"stuck,omitempty"`
	// UnknownShapes are the failure record shapes nudge does not know
	// (docs/failures.md), seen since start: each logged once, counted here
	// so that a person can report them; the most seen first.
	UnknownShapes []UnknownShape `json:"unknown_shapes,omitempty"`
}

// Stuck is a source that cannot be read now: what it is ("muse serve", a
// path), since when, and what fails.
type Stuck struct {
	Source string    `json:"source"`
	Since  time.Time `json:"since"`
	Error  string    `json:"error"`
}

// UnknownShape is one failure record shape nudge does not know.
type UnknownShape struct {
	Agent string `json:"agent"`
	Shape string `json:"shape"` // the fields it carried, the codes no table row knows
	Count int    `json:"count"` // dead turns of that shape since start
	Path  string `json:"path"`  // the latest file it was in
}

// SkippedFile is a session file with skipped lines.
type SkippedFile struct {
	Path   string    `json:"path"`
	Lines  int       `json:"lines"`
	Offset int64     `json:"offset"` // where the latest skipped line starts
	Reason string    `json:"reason"` // why it was skipped
	At     time.Time `json:"at"`
}

// StoreFailing says the database refuses writes (a full disk, say): what
// was read since is held back, nothing is told, and storing is tried again;
// once it works, the files are read again from the last stored positions and
// everything written meanwhile is told once (docs/durability.md).
type StoreFailing struct {
	Since   time.Time `json:"since"`
	Error   string    `json:"error"`
	Tries   int       `json:"tries"`
	NextTry time.Time `json:"next_try"`
}

// Sentence says it for the person.
func (f *StoreFailing) Sentence(now time.Time) string {
	return fmt.Sprintf("cannot save since %s (%s); trying again in %s; nothing is lost",
		f.Since.Local().Format(time.TimeOnly), f.Error, max(f.NextTry.Sub(now), 0).Round(time.Second))
}

// Settings are the toggles a person flips from the menu or the CLI.
type Settings struct {
	RetryEnabled            bool `json:"retry_enabled"`              // "Retry after API errors"
	ContinueAfterUsageLimit bool `json:"continue_after_usage_limit"` // "Continue after usage limit"
	Paused                  bool `json:"paused"`                     // watching, never acting
}

// Session is one watched session and its state.
type Session struct {
	Agent   string `json:"agent"`
	Session string `json:"session"`
	Project string `json:"project"`
	State   string `json:"state"`
	// StateWords is State as the person reads it (StateWords); the views
	// add the times they count down to.
	StateWords string     `json:"state_words"`
	Note       string     `json:"note,omitempty"`
	Told       string     `json:"told,omitempty"`     // the note when it is what the person was told (gave up, needs sign-in, usage limit), shown under the session
	RetryAt    *time.Time `json:"retry_at,omitempty"` // the pending continuation, if any
	ResetAt    *time.Time `json:"reset_at,omitempty"` // usage limit: when it resets, if the agent said
	// Provider, Endpoint and Model are what the session's dead turn failed
	// against, while nudge acts on it.
	Provider  string    `json:"provider,omitempty"`
	Endpoint  string    `json:"endpoint,omitempty"`
	Model     string    `json:"model,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// stateWords are the session states (retry.States) as the person reads
// them (docs/behaviour.md §6); views add the times they count down to.
// TestEveryStateHasWords holds it to retry.States.
var stateWords = map[string]string{
	"":                 "watching",
	"working":          "working",
	"finished":         "finished",
	"failed":           "failed",
	"retrying":         "retrying",
	"waiting_box":      "waiting for a box",
	"waiting_you":      "waiting for you",
	"waiting_provider": "waiting for the provider",
	"usage_limit":      "usage limit",
	"needs_signin":     "needs sign-in",
	"cancelled":        "cancelled",
	"gave_up":          "gave up",
}

// busyStates are the states in which nudge acts on a session: a
// continuation is pending, or due and held (retry.State.Due).
var busyStates = map[string]bool{"retrying": true, "waiting_box": true, "waiting_you": true, "waiting_provider": true}

// StateWords says a session's state as the person reads it, "gave up" for
// gave_up; a state of a later release reads as its name.
func StateWords(state string) string {
	if w, ok := stateWords[state]; ok {
		return w
	}
	return strings.ReplaceAll(state, "_", " ")
}

// Look is the overall state at a glance, as the menu-bar icon and the Inbox
// window show it (docs/behaviour.md §6).
type Look string

// The looks, from the least to the most pressing.
const (
	AllFine        Look = "all_fine"
	Retrying       Look = "retrying"        // a session retrying or waiting for a box
	NeedsAttention Look = "needs_attention" // unread Inbox entries, a session that needs sign-in, or the database cannot save
)

// Words says the look as the person reads it: "needs attention".
func (l Look) Words() string { return strings.ReplaceAll(string(l), "_", " ") }

// Busy tells whether nudge is acting on the session: a continuation is
// pending or waits for a box to close.
func (s Session) Busy() bool {
	return busyStates[s.State]
}

// CannotSave tells that the running daemon's store refuses writes.
func (st Status) CannotSave() bool { return st.Daemon != nil && st.Daemon.StoreFailing != nil }

// Overall judges st at a glance, with unread Inbox entries (a count below
// zero when they could not be counted).
func Overall(st Status, unread int) Look {
	if unread > 0 || st.CannotSave() {
		return NeedsAttention
	}
	busy := false
	for _, s := range st.Sessions {
		if s.State == "needs_signin" {
			return NeedsAttention
		}
		busy = busy || s.Busy()
	}
	if busy {
		return Retrying
	}
	return AllFine
}

// SettingsChange is a request to flip toggles; nil fields stay as they are.
type SettingsChange struct {
	RetryEnabled            *bool `json:"retry_enabled,omitempty"`
	ContinueAfterUsageLimit *bool `json:"continue_after_usage_limit,omitempty"`
	Paused                  *bool `json:"paused,omitempty"`
}
