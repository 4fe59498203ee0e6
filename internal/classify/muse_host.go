package classify

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Muse sessions read by the host query (docs/agents/muse.md §A1): each
// change of a session's session.jsonl asks nudge's own `muse serve`, and
// each answer (the session/read and usage/read results) is one record
// here. The answers are point-in-time pictures; the reader turns the
// differences between them into events, with the classification table of
// docs/agents/muse.md §A3 for the last turn.

// museSessionFile is the name of a session's durable log, used only as the
// trigger of a host query (docs/agents/muse.md §A1).
const museSessionFile = "session.jsonl"

// museReadBy says how nudge reads the Muse session whose records come from
// path: by asking `muse serve` (a session.jsonl trigger) or from a frame log.
func museReadBy(path string) string {
	if filepath.Base(path) == museSessionFile {
		return "host query: `muse serve` is asked on each change of " + path
	}
	return "frame log " + path
}

// museHostReader reads the answers about one session.
type museHostReader struct {
	session string // the folder name, until an answer names it
	project string
	seen    bool            // an answer was read
	active  string          // the running turn of the last answer
	ended   map[string]bool // turns whose ending was reported
	boxes   map[string]string
	usage   *museUsage // the last usage picture
}

func newMuseHostReader(path string) *museHostReader {
	return &museHostReader{
		session: filepath.Base(filepath.Dir(path)),
		ended:   map[string]bool{},
		boxes:   map[string]string{},
	}
}

// museAnswer is one host-query record, as internal/watch/muse writes it:
// the session/read and usage/read results, verbatim.
type museAnswer struct {
	SessionID string          `json:"sessionId"`
	Read      json.RawMessage `json:"read"`
	Usage     json.RawMessage `json:"usage"`
}

// museRead is the part of a session/read result nudge reads (MSP
// SessionReadResult): the session, its last turn and its open requests.
type museRead struct {
	Session struct {
		SessionID      string     `json:"sessionId"`
		Status         flexString `json:"status"`
		ActiveTurnID   flexString `json:"activeTurnId"`
		WorkspaceRoot  flexString `json:"workspaceRoot"`
		UpdatedAt      flexString `json:"updatedAt"`
		LastActivityAt flexString `json:"lastActivityAt"`
	} `json:"session"`
	LastTurn *struct {
		TurnID   flexString     `json:"turnId"`
		Terminal flexString     `json:"terminal"`
		Error    *museTurnError `json:"error"`
		Reason   flexString     `json:"reason"`
	} `json:"lastTurn"`
	PendingRequests []struct {
		Kind        flexString `json:"kind"`
		ApprovalID  flexString `json:"approvalId"`
		UserInputID flexString `json:"userInputId"`
	} `json:"pendingRequests"`
}

// museUsageRead is a usage/read result: {usage?: SubscriptionUsage}.
type museUsageRead struct {
	Usage *struct {
		Window *museWindow `json:"window"`
		Weekly *museWindow `json:"weekly"`
	} `json:"usage"`
}

// Read turns one answer into what changed since the last one.
func (m *museHostReader) Read(record []byte) []Event {
	var a museAnswer
	if len(record) == 0 || json.Unmarshal(record, &a) != nil {
		return nil
	}
	var r museRead
	if len(a.Read) == 0 || !decodeRecord(a.Read, &r) {
		return nil
	}
	if id := firstNonEmptyString(r.Session.SessionID, a.SessionID); id != "" {
		m.session = id
	}
	if root := string(r.Session.WorkspaceRoot); root != "" {
		m.project = root
	}
	ts := museStamp(string(r.Session.LastActivityAt), string(r.Session.UpdatedAt))
	limited := m.usageRead(a.Usage, ts)
	turn := m.turn(&r, ts)
	for _, e := range turn {
		if e.Kind == TurnFailed && e.Failure.Class == UsageLimit {
			limited = nil // the dead turn tells the limit
		}
	}
	out := append(limited, turn...)
	out = append(out, m.pending(&r, ts)...)
	m.seen = true
	return out
}

// museStamp is the first of the RFC 3339 times that parses.
func museStamp(times ...string) time.Time {
	for _, s := range times {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

func (m *museHostReader) event(k Kind, ts time.Time) Event {
	return Event{Agent: museName, Session: m.session, Project: m.project, Time: ts, Kind: k}
}

// usageRead reports an exhausted usage window once per reset (docs/agents/muse.md §A2).
func (m *museHostReader) usageRead(raw json.RawMessage, ts time.Time) []Event {
	var u museUsageRead
	if len(raw) == 0 || !decodeRecord(raw, &u) || u.Usage == nil {
		return nil
	}
	now := museUsageOf(u.Usage.Window, u.Usage.Weekly)
	before := m.usage
	m.usage = now
	if !now.exhausted || before != nil && before.exhausted && before.resetAt.Equal(now.resetAt) {
		return nil
	}
	e := m.event(UsageLimited, ts)
	e.Failure = museUsageFailure(now)
	return []Event{e}
}

// turn reports a turn that started, and the ending of the last turn the
// first time it is seen. On the first answer a running turn's predecessor
// is history: only its own ending will count.
func (m *museHostReader) turn(r *museRead, ts time.Time) []Event {
	var out []Event
	active := string(r.Session.ActiveTurnID)
	last := r.LastTurn
	if !m.seen && last != nil && active != "" {
		m.ended[string(last.TurnID)] = true
	}
	switch {
	case active != "" && active != m.active:
		out = append(out, turnEvents(active, []Event{m.event(TurnStarted, ts)})...)
	case active != "":
		out = append(out, m.event(AgentActivity, ts))
	}
	m.active = active
	if last == nil || last.TurnID == "" || string(last.TurnID) == active || m.ended[string(last.TurnID)] {
		return out
	}
	m.ended[string(last.TurnID)] = true
	p := museParams{TurnID: string(last.TurnID), Terminal: string(last.Terminal), Error: last.Error, Reason: string(last.Reason)}
	if p.Terminal == "completed" {
		return append(out, turnEvents(p.TurnID, []Event{m.event(TurnDone, ts)})...)
	}
	f := museFailure(&p, m.usage, ts)
	e := m.event(TurnFailed, ts)
	e.Failure = &f
	return append(out, turnEvents(p.TurnID, []Event{e})...)
}

// pending opens a box for each new open request and closes the last box
// once none is open (docs/agents/muse.md §A3: an open approval or question is a box).
func (m *museHostReader) pending(r *museRead, ts time.Time) []Event {
	var out []Event
	open := map[string]string{}
	for _, p := range r.PendingRequests {
		key, name := string(p.ApprovalID), museApprovalBox
		if p.Kind == "userInput" || key == "" {
			key, name = string(p.UserInputID), museQuestionBox
		}
		if key == "" {
			continue
		}
		open[key] = name
	}
	for _, key := range slices.Sorted(maps.Keys(open)) {
		if _, known := m.boxes[key]; known {
			continue
		}
		e := m.event(BoxOpened, ts)
		e.Box = open[key]
		out = append(out, e)
	}
	if len(open) == 0 && len(m.boxes) > 0 {
		var last string
		for _, name := range m.boxes {
			last = name
		}
		e := m.event(BoxClosed, ts)
		e.Box = last
		out = append(out, e)
	}
	m.boxes = open
	return out
}

// museIsSessionFile tells a host-query trigger path.
func museIsSessionFile(path string) bool {
	return filepath.Base(path) == museSessionFile && strings.Contains(filepath.ToSlash(path), "/sessions/")
}
