// Package explain is one session's timeline as `nudge explain` and the MCP
// server show it: its events, the retry machine's decisions and the
// attempts, read from the database.
package explain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
	"nudge/internal/inbox"
	"nudge/internal/safetext"
	"nudge/internal/status"
)

// Reasons Find gives no session.
var (
	// ErrNoSession: no stored session has the id or a prefix of it.
	ErrNoSession = errors.New("no session")
	// ErrAmbiguous: the prefix matches more than one session.
	ErrAmbiguous = errors.New("matches more than one session")
)

// Timeline is what `nudge explain --json` prints (docs/behaviour.md §8).
type Timeline struct {
	Agent     string  `json:"agent"`
	Session   string  `json:"session"`
	Project   string  `json:"project"`
	State     string  `json:"state"`
	Events    []Event `json:"events"`
	Decisions []Note  `json:"decisions"`
	Attempts  []Try   `json:"attempts"`
}

// Event is one classified event of the session.
type Event struct {
	Time       *time.Time `json:"time"` // the record's own time
	DetectedAt time.Time  `json:"detected_at"`
	Kind       string     `json:"kind"`
	Class      string     `json:"class,omitempty"`
	Code       string     `json:"code,omitempty"`
	Message    string     `json:"message,omitempty"`
	ResetAt    *time.Time `json:"reset_at,omitempty"`
	Detail     string     `json:"detail,omitempty"`
}

// Note is one decision of the retry machine.
type Note struct {
	Time time.Time `json:"time"`
	What string    `json:"what"`
}

// Try is one continuation from the attempt ledger.
type Try struct {
	Attempt  int        `json:"attempt"`
	Status   string     `json:"status"` // sending, sent, failed
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	Backend  string     `json:"backend,omitempty"`
	Target   string     `json:"target,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	Text     string     `json:"text"`
}

// Load finds the session id names (see Find) and reads its timeline.
func Load(ctx context.Context, db *inbox.DB, id string) (Timeline, error) {
	row, err := Find(ctx, db, id)
	if err != nil {
		return Timeline{}, err
	}
	events, decisions, attempts, err := db.Timeline(ctx, row.Agent, row.Session)
	if err != nil {
		return Timeline{}, err
	}
	return New(row, events, decisions, attempts), nil
}

// Find matches a session id or a unique prefix of one.
func Find(ctx context.Context, db *inbox.DB, id string) (inbox.SessionRow, error) {
	rows, err := db.Sessions(ctx)
	if err != nil {
		return inbox.SessionRow{}, err
	}
	var found []inbox.SessionRow
	for _, r := range rows {
		if r.Session == id {
			return r, nil
		}
		if id != "" && strings.HasPrefix(r.Session, id) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return inbox.SessionRow{}, fmt.Errorf("%w %q", ErrNoSession, id)
	case 1:
		return found[0], nil
	}
	return inbox.SessionRow{}, fmt.Errorf("%q %w (%d); give more of the id", id, ErrAmbiguous, len(found))
}

// New builds the timeline of session s from its stored rows.
func New(s inbox.SessionRow, events []inbox.EventRow, decisions []inbox.DecisionRow, attempts []inbox.AttemptRow) Timeline {
	t := Timeline{Agent: s.Agent, Session: s.Session, Project: s.Project, State: s.State,
		Events: []Event{}, Decisions: []Note{}, Attempts: []Try{}}
	for _, e := range events {
		te := Event{DetectedAt: e.DetectedAt, Kind: e.Kind, Class: e.Class, Code: e.Code, Message: e.Message, Detail: e.Detail}
		te.Time = optTime(e.Time)
		te.ResetAt = optTime(e.ResetAt)
		t.Events = append(t.Events, te)
	}
	for _, d := range decisions {
		t.Decisions = append(t.Decisions, Note{Time: d.Time, What: d.What})
	}
	for _, a := range attempts {
		t.Attempts = append(t.Attempts, Try{Attempt: a.Attempt, Status: a.Status, Started: a.Started,
			Finished: optTime(a.Finished), Backend: a.Backend, Target: a.Target, Reason: a.Reason, Text: a.Text})
	}
	return t
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Line is one moment of a timeline's story, in words: what `nudge explain`
// prints and the Inbox window draws.
type Line struct {
	At   time.Time `json:"at"`
	Kind string    `json:"kind"` // event, decision or attempt
	// Tone marks how the moment went: failed, ok, or "" for neither.
	Tone string `json:"tone,omitempty"`
	Text string `json:"text"`
	// Quote is the agent's own words for it (an error text), shown as text.
	Quote string `json:"quote,omitempty"`
}

// The kinds of Line.
const (
	LineEvent    = "event"
	LineDecision = "decision"
	LineAttempt  = "attempt"
)

// Story is the timeline in time order, events, decisions and attempts
// interleaved, each in words. A decision that ends with why an attempt was
// not delivered refers to it rather than saying it again.
func (t Timeline) Story() []Line {
	lines := make([]Line, 0, len(t.Events)+len(t.Decisions)+len(t.Attempts))
	for _, e := range t.Events {
		lines = append(lines, eventLine(e))
	}
	for _, d := range t.Decisions {
		text := d.What
		for _, a := range t.Attempts {
			if before, ok := strings.CutSuffix(text, ": "+a.Reason); ok && a.Status == inbox.AttemptFailed && a.Reason != "" && !d.Time.Before(a.Started) {
				text = fmt.Sprintf("%s why continuation %d was not delivered", before, a.Attempt)
				break
			}
		}
		lines = append(lines, Line{At: d.Time, Kind: LineDecision, Text: text})
	}
	for _, a := range t.Attempts {
		lines = append(lines, attemptLine(a))
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].At.Before(lines[j].At) })
	return lines
}

func eventLine(e Event) Line {
	l := Line{At: e.DetectedAt, Kind: LineEvent, Text: classify.Kind(e.Kind).Words(), Quote: e.Message}
	switch classify.Kind(e.Kind) {
	case classify.TurnFailed:
		l.Tone = "failed"
	case classify.TurnDone:
		l.Tone = "ok"
	}
	if e.Class != "" && classify.Kind(e.Kind) != classify.UsageLimited {
		l.Text += ": " + classify.Class(e.Class).Words()
	}
	if e.Code != "" {
		l.Text += " (" + e.Code + ")"
	}
	if e.ResetAt != nil {
		l.Text += ", resets at " + advice.Clock(*e.ResetAt)
	}
	if e.Detail != "" {
		l.Text += " (" + e.Detail + ")"
	}
	return l
}

func attemptLine(a Try) Line {
	l := Line{At: a.Started, Kind: LineAttempt}
	place := strings.TrimSpace(a.Backend + " " + a.Target)
	switch a.Status {
	case inbox.AttemptSent:
		l.Tone, l.Text = "ok", fmt.Sprintf("continuation %d typed", a.Attempt)
	case inbox.AttemptFailed:
		l.Tone, l.Text = "failed", fmt.Sprintf("continuation %d not delivered", a.Attempt)
	default:
		l.Text = fmt.Sprintf("continuation %d being typed", a.Attempt)
	}
	if place != "" {
		l.Text += " at " + place
	}
	if a.Reason != "" {
		l.Text += ": " + a.Reason
	}
	return l
}

// Print writes the story for a person's terminal: the records' text as
// plain lines.
func (t Timeline) Print(w io.Writer) {
	safetext.Fprintf(w, "%s session %s in %s — now %s\n", t.Agent, t.Session, t.Project, status.StateWords(t.State))
	for _, l := range t.Story() {
		text := l.Text
		if l.Quote != "" {
			text += ": " + l.Quote
		}
		safetext.Fprintf(w, "%s  %-9s %s\n", l.At.Local().Format("15:04:05.000"), l.Kind, text)
	}
}
