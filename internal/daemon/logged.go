package daemon

import (
	"context"
	"log/slog"
	"sort"
	"strings"

	"nudge/internal/classify"
	"nudge/internal/retry"
	"nudge/internal/status"
	"nudge/internal/watch"
)

// The log follows each session's course: one INFO line per change (a dead
// turn, a continuation scheduled, sending one, recovered, the person told
// or given up on), with the session and the agent's pid where known; with
// log.level debug, every record's classification and every decision too.

// say adds a log line that is written once the step is stored.
func (st *step) say(line func()) { st.said = append(st.said, line) }

// about names a session in a log line: its agent, id and, when a live
// registry gave it, the agent's pid.
func about(s *session, more ...any) []any {
	attrs := []any{"agent", s.key.Agent, "session", s.key.Session}
	if s.process != nil && s.process.PID > 0 {
		attrs = append(attrs, "pid", s.process.PID)
	}
	return append(attrs, more...)
}

// logRecord logs, at DEBUG, what one record was read as.
func (d *Daemon) logRecord(rec watch.Record, events []classify.Event) {
	if !d.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	kinds := make([]string, len(events))
	for i, ev := range events {
		kinds[i] = string(ev.Kind)
		if ev.Failure != nil {
			kinds[i] += "/" + string(ev.Failure.Class)
		}
	}
	read := strings.Join(kinds, ",")
	if read == "" {
		read = "nothing"
	}
	d.log.Debug("record classified", "agent", rec.Agent, "path", rec.Path, "offset", rec.Offset, "events", read)
}

// deadTurnLine logs a dead turn as it is detected.
func (d *Daemon) deadTurnLine(s *session, ev classify.Event) func() {
	attrs := about(s)
	if f := ev.Failure; f != nil {
		attrs = append(attrs, "class", string(f.Class), "code", f.Code, "error", f.Excerpt())
	}
	return func() { d.log.Info("dead turn", attrs...) }
}

// decisionLine logs a decision of a session's machine: a change of course
// at INFO, the rest at DEBUG.
func (d *Daemon) decisionLine(s *session, a retry.Decision) func() {
	attrs := about(s, "what", a.What)
	switch a.Step {
	case retry.StepScheduled:
		return func() { d.log.Info("continuation scheduled", attrs...) }
	case retry.StepRecovered:
		return func() { d.log.Info("recovered", attrs...) }
	}
	return func() { d.log.Debug("decision", attrs...) }
}

// toldLine logs what the person is told, in the words of the Inbox entry,
// named by the state it leaves the session in.
func (d *Daemon) toldLine(s *session, e retry.Entry) func() {
	msg := "told the person"
	switch state, _ := s.machine.State(); state {
	case retry.GaveUp:
		msg = "gave up"
	case retry.NeedsSignIn:
		msg = "needs sign-in"
	case retry.UsageLimit:
		msg = "usage limit"
	}
	attrs := about(s, "what", e.What, "attempts", e.Attempts)
	return func() { d.log.Info(msg, attrs...) }
}

// maxShapes bounds the unknown failure record shapes kept; past it, new
// shapes are still logged but not counted apart.
const maxShapes = 64

// shapeKey is one agent's failure record shape.
type shapeKey struct{ agent, shape string }

// noteShapes logs a dead turn whose record shape nudge does not know, once
// per shape, and counts it for `nudge doctor` (docs/failures.md).
func (d *Daemon) noteShapes(rec watch.Record, events []classify.Event) {
	for _, ev := range events {
		f := ev.Failure
		if ev.Kind != classify.TurnFailed || f == nil || f.Shape == "" {
			continue
		}
		k := shapeKey{rec.Agent, f.Shape}
		if u := d.shapes[k]; u != nil {
			u.Count++
			u.Path = rec.Path
			continue
		}
		d.log.Warn("failure record of a shape nudge does not know; please report it (nudge classify --why FILE)",
			"agent", rec.Agent, "shape", f.Shape, "class", string(f.Class), "path", rec.Path, "offset", rec.Offset)
		if len(d.shapes) < maxShapes {
			d.shapes[k] = &status.UnknownShape{Agent: rec.Agent, Shape: f.Shape, Count: 1, Path: rec.Path}
		}
	}
}

// unknownShapes are the shapes for the view, the most seen first.
func (d *Daemon) unknownShapes() []status.UnknownShape {
	out := make([]status.UnknownShape, 0, len(d.shapes))
	for _, u := range d.shapes {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Agent+out[i].Shape < out[j].Agent+out[j].Shape
	})
	return out
}
