package main

import (
	"fmt"
	"io"
	"sort"
	"time"

	"nudge/internal/inbox"
)

// timeline is what `nudge explain --json` prints (SPEC §8).
type timeline struct {
	Agent     string          `json:"agent"`
	Session   string          `json:"session"`
	Project   string          `json:"project"`
	State     string          `json:"state"`
	Events    []timelineEvent `json:"events"`
	Decisions []timelineNote  `json:"decisions"`
	Attempts  []timelineTry   `json:"attempts"`
}

type timelineEvent struct {
	Time       *time.Time `json:"time"` // the record's own time
	DetectedAt time.Time  `json:"detected_at"`
	Kind       string     `json:"kind"`
	Class      string     `json:"class,omitempty"`
	Code       string     `json:"code,omitempty"`
	Message    string     `json:"message,omitempty"`
	ResetAt    *time.Time `json:"reset_at,omitempty"`
	Detail     string     `json:"detail,omitempty"`
}

type timelineNote struct {
	Time time.Time `json:"time"`
	What string    `json:"what"`
}

type timelineTry struct {
	Attempt  int        `json:"attempt"`
	Status   string     `json:"status"` // sending, sent, failed
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	Backend  string     `json:"backend,omitempty"`
	Target   string     `json:"target,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	Text     string     `json:"text"`
}

func newTimeline(s inbox.SessionRow, events []inbox.EventRow, decisions []inbox.DecisionRow, attempts []inbox.AttemptRow) timeline {
	t := timeline{Agent: s.Agent, Session: s.Session, Project: s.Project, State: s.State,
		Events: []timelineEvent{}, Decisions: []timelineNote{}, Attempts: []timelineTry{}}
	for _, e := range events {
		te := timelineEvent{DetectedAt: e.DetectedAt, Kind: e.Kind, Class: e.Class, Code: e.Code, Message: e.Message, Detail: e.Detail}
		te.Time = optTime(e.Time)
		te.ResetAt = optTime(e.ResetAt)
		t.Events = append(t.Events, te)
	}
	for _, d := range decisions {
		t.Decisions = append(t.Decisions, timelineNote{Time: d.Time, What: d.What})
	}
	for _, a := range attempts {
		t.Attempts = append(t.Attempts, timelineTry{Attempt: a.Attempt, Status: a.Status, Started: a.Started,
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

// print writes the timeline in time order, events, decisions and attempts interleaved.
func (t timeline) print(w io.Writer) {
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	for _, e := range t.Events {
		text := e.Kind
		if e.Class != "" {
			text += " [" + e.Class + "]"
		}
		if e.Message != "" {
			text += " " + e.Message
		}
		if e.Detail != "" {
			text += " (" + e.Detail + ")"
		}
		lines = append(lines, line{e.DetectedAt, "event     " + text})
	}
	for _, d := range t.Decisions {
		lines = append(lines, line{d.Time, "decision  " + d.What})
	}
	for _, a := range t.Attempts {
		text := fmt.Sprintf("attempt %d %s", a.Attempt, a.Status)
		if a.Backend != "" {
			text += " via " + a.Backend + " " + a.Target
		}
		if a.Reason != "" {
			text += ": " + a.Reason
		}
		lines = append(lines, line{a.Started, "attempt   " + text})
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].at.Before(lines[j].at) })
	fmt.Fprintf(w, "%s session %s in %s — now %s\n", t.Agent, t.Session, t.Project, t.State)
	for _, l := range lines {
		fmt.Fprintf(w, "%s  %s\n", l.at.Local().Format("15:04:05.000"), l.text)
	}
}
