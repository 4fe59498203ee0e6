package classify

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// claudeRegistry reads the live registry file ~/.claude/sessions/<pid>.json
// that every running CLI keeps (docs/agents/claude.md §7.1). One record is the
// whole file; an empty record means the file was removed: the process ended.
type claudeRegistry struct {
	filePID int                  // the pid in the file name
	last    *claudeRegistryEntry // the previous snapshot; nil before the first or after removal
	gone    bool                 // the removal was already reported
}

// claudeRegistryEntry is the registry snapshot; extra fields are tolerated.
type claudeRegistryEntry struct {
	PID             int     `json:"pid"`
	SessionID       string  `json:"sessionId"`
	Cwd             string  `json:"cwd"`
	Status          string  `json:"status"`     // busy, idle, waiting
	WaitingFor      string  `json:"waitingFor"` // "permission prompt", "input needed"
	Tmux            string  `json:"tmux"`       // "session:@window.%pane"
	UpdatedAt       float64 `json:"updatedAt"`  // Unix milliseconds
	StatusUpdatedAt float64 `json:"statusUpdatedAt"`
}

var _ WholeFile = (*claudeRegistry)(nil)

// WholeFile marks the registry reader: its record is the whole file.
func (*claudeRegistry) WholeFile() {}

func newClaudeRegistry(path string) *claudeRegistry {
	pid, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(path), ".json"))
	return &claudeRegistry{filePID: pid}
}

// Read classifies one snapshot of the registry file. It reports changes
// only: a rewrite that changes nothing nudge reads yields no events.
func (g *claudeRegistry) Read(content []byte) []Event {
	if len(bytes.TrimSpace(content)) == 0 {
		return g.removed()
	}
	var e claudeRegistryEntry
	if !decodeRecord(content, &e) {
		return nil
	}
	if e.Status == "" && e.SessionID == "" {
		return nil // not a snapshot of a session
	}
	if e.PID == 0 {
		e.PID = g.filePID
	}
	prev := g.last
	g.last, g.gone = &e, false
	if prev != nil && *prev == e.withTimes(prev) {
		return nil
	}
	var out []Event
	if prev.waiting() && (!e.waiting() || e.WaitingFor != prev.WaitingFor || e.SessionID != prev.SessionID) {
		out = append(out, e.boxClosed(prev))
	}
	switch e.Status {
	case StatusWaiting:
		opened := e.event(BoxOpened)
		opened.Box = e.WaitingFor
		out = append(out, opened)
	case StatusBusy:
		out = append(out, e.event(AgentActivity))
	case StatusIdle:
		out = append(out, e.event(AgentIdle))
	}
	return out
}

// removed reports the end of the process once, closing a box it left open.
func (g *claudeRegistry) removed() []Event {
	if g.gone {
		return nil
	}
	prev := g.last
	g.last, g.gone = nil, true
	if prev == nil {
		if g.filePID == 0 {
			return nil
		}
		prev = &claudeRegistryEntry{PID: g.filePID}
	}
	gone := *prev
	gone.Status, gone.WaitingFor, gone.UpdatedAt, gone.StatusUpdatedAt = StatusExited, "", 0, 0
	var out []Event
	if prev.waiting() {
		out = append(out, gone.boxClosed(prev))
	}
	return append(out, gone.event(AgentIdle))
}

func (e *claudeRegistryEntry) waiting() bool { return e != nil && e.Status == StatusWaiting }

// withTimes returns e with the timestamps of prev, to compare what matters.
func (e claudeRegistryEntry) withTimes(prev *claudeRegistryEntry) claudeRegistryEntry {
	e.UpdatedAt, e.StatusUpdatedAt = prev.UpdatedAt, prev.StatusUpdatedAt
	return e
}

func (e *claudeRegistryEntry) event(k Kind) Event {
	return Event{
		Agent: claudeName, Session: e.SessionID, Project: e.Cwd, Kind: k, Time: e.changedAt(),
		Process: &Process{PID: e.PID, Status: e.Status, Waiting: e.WaitingFor, TmuxPane: claudeTmuxPane(e.Tmux), Cwd: e.Cwd},
	}
}

// boxClosed reports that the box of the waiting snapshot prev is gone, with
// the process as e now stands.
func (e *claudeRegistryEntry) boxClosed(prev *claudeRegistryEntry) Event {
	ev := e.event(BoxClosed)
	ev.Session, ev.Box = prev.SessionID, prev.WaitingFor
	return ev
}

// changedAt is when the status last changed, else when the file was written.
func (e *claudeRegistryEntry) changedAt() time.Time {
	ms := e.StatusUpdatedAt
	if ms <= 0 {
		ms = e.UpdatedAt
	}
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// claudeTmuxPane takes the pane id from "session:@window.%pane" (§7.1).
func claudeTmuxPane(tmux string) string {
	i := strings.LastIndexByte(tmux, '%')
	if i < 0 || !claudeDigits(tmux[i+1:]) {
		return ""
	}
	return tmux[i:]
}
