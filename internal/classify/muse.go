package classify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Muse Code: frame logs of the Muse Session Protocol (MSP v1), one
// {"dir":"client"|"server","raw":"<frame>"} line per JSON-RPC frame, the
// format of the protocol's golden transcripts (docs/agents/muse.md A1, A2). A
// client that sits on `muse serve`'s stdio writes them under
// <museHome>/nudge/frames/. The CLI's own session.jsonl is not a format
// (docs/agents/muse.md A1, A6) and is never read.
//
// ACP frame logs (docs/agents/muse.md Part B) share the line format but name no agent:
// a log of `kimi acp` belongs to Kimi, whose wire record carries the
// failures its ACP stream hides (docs/agents/muse.md B2), so they are not read as Muse.

const museName = "muse"

// museLoginHint is what a person does after authRequired (docs/behaviour.md §2, docs/agents/muse.md A3).
const museLoginHint = "run `muse login`, or set META_API_KEY"

func init() {
	register(Agent{
		Name:  museName,
		Title: "Muse",
		// docs/agents/muse.md A1: Muse's home is ~/.muse (no variable moves it). MSP
		// frame logs that a client on `muse serve`'s stdio writes under
		// nudge/frames/ are read line by line; a session's session.jsonl is not
		// a format: its change only triggers a host query to nudge's own
		// `muse serve` (session/read, usage/read).
		Home: Home{Dir: ".muse"},
		Files: []FileSet{
			{Pattern: museFramesDir + "/*.ndjson", Kind: JSONLines},
			{Pattern: "sessions/*/*/*/*/" + museSessionFile, Kind: HostQuery, Host: "muse"},
		},
		NewReader: func(path string, _ Files) Reader {
			if museIsSessionFile(path) {
				return newMuseHostReader(path)
			}
			return newMuseReader(path)
		},
		Recognize: recognizeMuse,
		ReadBy:    museReadBy,
		LoginHint: museLoginHint,
		Blind: "nudge asks its own `muse serve` (the `muse` on its PATH) about a session each time the session's " +
			"session.jsonl changes, or reads MSP frame logs (<muse root>/nudge/frames/*.ndjson) that a client on " +
			"`muse serve`'s stdio writes; without `muse` on PATH only frame logs are read",
		Executables: []string{"muse"},
		// docs/agents/muse.md A2: MSP leaves sessionId opaque (Muse writes UUIDv7s; other
		// hosts name sessions as they like).
		SessionID: regexp.MustCompile(anyIDPattern),
		// Muse's host speaks to Meta (docs/agents/muse.md).
		Provider: "meta",
	})
}

// museFramesDir is where frame logs live under Muse's home.
const museFramesDir = "nudge/frames"

// recognizeMuse knows a frame log by its place, or by a first line in the
// golden-transcript form carrying MSP-only vocabulary (an ACP log has none).
func recognizeMuse(path string, head []byte) bool {
	slash := filepath.ToSlash(path)
	if filepath.Ext(path) == ".ndjson" && strings.HasSuffix(filepath.ToSlash(filepath.Dir(path)), "/"+museFramesDir) &&
		strings.Contains(slash, "/.muse/") {
		return true
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if !bytes.HasPrefix(trimmed, []byte(`{"dir":"`)) || !bytes.Contains(head, []byte(`"raw":"`)) {
		return false
	}
	for _, marker := range museHeadMarkers {
		if bytes.Contains(head, []byte(marker)) {
			return true
		}
	}
	return false
}

// museHeadMarkers are MSP words, escaped as they appear inside "raw"
// (docs/agents/muse.md A2): every view notification carries a viewCursor, initialize
// answers with museHome.
var museHeadMarkers = []string{
	`\"viewCursor\"`, `\"museHome\"`, `\"method\":\"turn/`, `\"method\":\"item/`, `\"method\":\"approval/`,
}

// museReader reads one frame log. One log may carry several sessions: every
// event names the frame's own session.
type museReader struct {
	fallback string // the file name, for frames that name no session
	last     string // the latest session named by a frame
	sessions map[string]*museSession
	usage    *museUsage // the latest SubscriptionUsage: per account, not per session
}

// museSession is what the reader remembers of one session.
type museSession struct {
	project  string
	boxes    map[string]museBox // open approvals and questions by approvalId / userInputId
	settled  map[string]bool    // boxes already answered: a late twin must not reopen them
	ended    map[string]bool    // turns whose turn/completed was read
	commands map[string]bool    // commandIds already announced as a person's message
}

// museBox is one open approval or question.
type museBox struct {
	name string
	turn string
}

func newMuseReader(path string) *museReader {
	name := filepath.Base(path)
	return &museReader{
		fallback: strings.TrimSuffix(name, filepath.Ext(name)),
		sessions: map[string]*museSession{},
	}
}

// museLine is one line of a frame log.
type museLine struct {
	Dir string `json:"dir"`
	Raw string `json:"raw"`
}

// museFrame is one JSON-RPC 2.0 frame; only notifications and requests
// (those with a method) carry signal.
type museFrame struct {
	Method      string     `json:"method"`
	Params      museParams `json:"params"`
	EmittedAtMs float64    `json:"emittedAtMs"`
}

// museParams holds the fields nudge reads from any frame's params (docs/agents/muse.md A2).
type museParams struct {
	SessionID     string          `json:"sessionId"`
	TurnID        string          `json:"turnId"`
	CommandID     string          `json:"commandId"`
	Input         []textPart      `json:"input"`
	Terminal      string          `json:"terminal"`
	Error         *museTurnError  `json:"error"`
	Reason        string          `json:"reason"`
	ApprovalID    string          `json:"approvalId"`
	UserInputID   string          `json:"userInputId"`
	Item          *museItem       `json:"item"`
	Session       *museSessionRef `json:"session"`
	WorkspaceRoot string          `json:"workspaceRoot"`
	// usage/changed: params are a SubscriptionUsage.
	Window *museWindow `json:"window"`
	Weekly *museWindow `json:"weekly"`
}

// museTurnError is turn/completed's typed error.
type museTurnError struct {
	Kind      string `json:"kind"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

type museItem struct {
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	CommandID string `json:"commandId"`
}

type museSessionRef struct {
	SessionID     string `json:"sessionId"`
	WorkspaceRoot string `json:"workspaceRoot"`
}

// museWindow is one usage window; percentages may exceed 100 and reset
// times are epoch milliseconds (docs/agents/muse.md A2).
type museWindow struct {
	UsedPercent float64 `json:"usedPercent"`
	ResetsAtMs  float64 `json:"resetsAtMs"`
}

// museUsage is the exhausted state of the latest SubscriptionUsage.
type museUsage struct {
	exhausted bool
	resetAt   time.Time // the later reset of the exhausted windows
}

// Read classifies one frame-log line.
func (m *museReader) Read(line []byte) []Event {
	var l museLine
	if json.Unmarshal(line, &l) != nil || l.Raw == "" {
		return nil
	}
	var f museFrame
	if !decodeRecord([]byte(l.Raw), &f) {
		return nil
	}
	if f.Method == "" {
		// Responses: a JSON-RPC error is about a request, not a turn (A5).
		return nil
	}
	ts := museTime(f.EmittedAtMs)
	p := &f.Params
	if l.Dir == "client" {
		return m.client(f.Method, p, ts)
	}
	return m.server(f.Method, p, ts)
}

// client reads what a client sent: a person's message.
func (m *museReader) client(method string, p *museParams, ts time.Time) []Event {
	switch method {
	case "turn/start", "turn/steer":
		s, id := m.session(p.SessionID)
		if s == nil {
			return nil
		}
		if p.WorkspaceRoot != "" {
			s.project = p.WorkspaceRoot
		}
		if p.CommandID != "" {
			s.commands[p.CommandID] = true
		}
		e := m.event(id, UserMessage, ts)
		e.Text = partsText(p.Input)
		return []Event{e}
	}
	return nil
}

// server applies the table of docs/agents/muse.md A2.
func (m *museReader) server(method string, p *museParams, ts time.Time) []Event {
	if method == "usage/changed" {
		return m.usageChanged(p, ts)
	}
	if method == "session/started" && p.Session != nil {
		p.SessionID = p.Session.SessionID
	}
	s, id := m.session(p.SessionID)
	if s == nil {
		return nil
	}
	switch method {
	case "session/started":
		if p.Session != nil && p.Session.WorkspaceRoot != "" {
			s.project = p.Session.WorkspaceRoot
		}
		return nil
	case "turn/started":
		return turnEvents(p.TurnID, []Event{m.event(id, TurnStarted, ts)})
	case "turn/retryScheduled":
		return []Event{m.event(id, AgentRetrying, ts)}
	case "turn/completed":
		return turnEvents(p.TurnID, m.turnCompleted(s, id, p, ts))
	case "item/completed":
		if p.Item != nil && p.Item.Kind == "userMessage" {
			if p.Item.CommandID != "" && s.commands[p.Item.CommandID] {
				return nil // already read from the client's turn/start
			}
			if p.Item.CommandID != "" {
				s.commands[p.Item.CommandID] = true
			}
			e := m.event(id, UserMessage, ts)
			e.Text = p.Item.Text
			return []Event{e}
		}
		return []Event{m.event(id, AgentActivity, ts)}
	case "item/started", "item/updated", "item/delta", "session/tokenUsage", "turn/foregroundCompleted":
		return []Event{m.event(id, AgentActivity, ts)}
	case "approval/request", "approval/requested":
		return m.openBox(s, id, p.ApprovalID, museApprovalBox, p.TurnID, ts)
	case "userInput/request", "userInput/requested":
		return m.openBox(s, id, p.UserInputID, museQuestionBox, p.TurnID, ts)
	case "approval/resolved":
		return m.closeBox(s, id, p.ApprovalID, ts)
	case "userInput/settled":
		return m.closeBox(s, id, p.UserInputID, ts)
	}
	return nil
}

// The names of Muse's boxes, as shown to the person.
const (
	museApprovalBox = "approval"
	museQuestionBox = "question"
)

// session returns the state of the session a frame names (or the latest
// one, or the file's), creating it on first sight.
func (m *museReader) session(id string) (*museSession, string) {
	if id == "" {
		id = m.last
	}
	if id == "" {
		id = m.fallback
	}
	if id == "" {
		return nil, ""
	}
	m.last = id
	s := m.sessions[id]
	if s == nil {
		s = &museSession{
			boxes:    map[string]museBox{},
			settled:  map[string]bool{},
			ended:    map[string]bool{},
			commands: map[string]bool{},
		}
		m.sessions[id] = s
	}
	return s, id
}

func (m *museReader) event(session string, k Kind, ts time.Time) Event {
	e := Event{Agent: museName, Session: session, Time: ts, Kind: k}
	if s := m.sessions[session]; s != nil {
		e.Project = s.project
	}
	return e
}

// openBox opens a box once: a request and its notification twin describe
// the same box (docs/agents/muse.md A6).
func (m *museReader) openBox(s *museSession, session, key, name, turn string, ts time.Time) []Event {
	if key == "" || s.settled[key] {
		return nil
	}
	if _, open := s.boxes[key]; open {
		return nil
	}
	s.boxes[key] = museBox{name: name, turn: turn}
	e := m.event(session, BoxOpened, ts)
	e.Box = name
	return []Event{e}
}

// closeBox closes a box; box_closed is told when no other box of the
// session is still open, since a session is waiting while any box is.
func (m *museReader) closeBox(s *museSession, session, key string, ts time.Time) []Event {
	if key == "" {
		return nil
	}
	s.settled[key] = true
	b, open := s.boxes[key]
	if !open {
		return nil
	}
	delete(s.boxes, key)
	if len(s.boxes) > 0 {
		return nil
	}
	e := m.event(session, BoxClosed, ts)
	e.Box = b.name
	return []Event{e}
}

// turnCompleted ends a turn once, closing the boxes it left open.
func (m *museReader) turnCompleted(s *museSession, session string, p *museParams, ts time.Time) []Event {
	if p.TurnID != "" {
		if s.ended[p.TurnID] {
			return nil
		}
		s.ended[p.TurnID] = true
	}
	var out []Event
	var closed string
	for key, b := range s.boxes {
		if p.TurnID == "" || b.turn == "" || b.turn == p.TurnID {
			delete(s.boxes, key)
			s.settled[key] = true
			closed = b.name
		}
	}
	if closed != "" && len(s.boxes) == 0 {
		e := m.event(session, BoxClosed, ts)
		e.Box = closed
		out = append(out, e)
	}
	if p.Terminal == "completed" {
		return append(out, m.event(session, TurnDone, ts))
	}
	f := museFailure(p, m.usage, ts)
	e := m.event(session, TurnFailed, ts)
	e.Failure = &f
	return append(out, e)
}

// museFailure classifies a turn/completed that did not complete, at ts
// (docs/agents/muse.md A3): a cancel and a terminal of another name are the
// agent's own; an exhausted usage window settles a usage limit; the rest
// is the shared reading of its error kind, message and reason
// (docs/failures.md).
func museFailure(p *museParams, usage *museUsage, ts time.Time) Failure {
	if p.Terminal == "cancelled" {
		return Failure{Class: Cancelled, Code: "cancelled", Message: p.Reason, Rule: ruleType, Field: "terminal"}
	}
	if p.Terminal != "failed" {
		return Failure{Class: Unknown, Code: "terminal/" + p.Terminal, Message: museMessage(p), Rule: ruleType, Field: "terminal"}
	}
	e := p.Error
	var s failureSignals
	if e != nil {
		s.code("error.kind", e.Kind)
		s.text("error.message", e.Message)
		if e.Retryable {
			// Muse already spent its own attempts (turn/retryScheduled).
			s.retryable = "error.retryable"
		}
	}
	if e == nil || p.Reason != e.Message {
		s.text("reason", p.Reason)
	}
	if e != nil && e.Kind == "modelError" && usage != nil && usage.exhausted {
		s.mark(UsageLimit, "usage window", "exhausted")
	}
	f := readFailure(s)
	f.Message = museMessage(p)
	if e == nil {
		// A terminal synthesized after the host died mid-turn: reason only.
		f.Code, f.Message = "failed", "Muse stopped mid-turn"
		if p.Reason != "" {
			f.Message += ": " + p.Reason
		}
	} else {
		f.Code = e.Kind
	}
	switch f.Class {
	case Auth:
		f.Hint = museLoginHint
	case UsageLimit:
		if usage != nil && usage.exhausted {
			f.ResetAt = usage.resetAt
		}
		if f.ResetAt.IsZero() {
			f.ResetAt, f.ResetUnread = readReset(f.Message, ts)
		}
	}
	return f
}

// museMessage is the text the person saw: the error's message, else the
// free-text reason.
func museMessage(p *museParams) string {
	if p.Error != nil && p.Error.Message != "" {
		return p.Error.Message
	}
	return p.Reason
}

// usageChanged reads a SubscriptionUsage. It is per account and host, so an
// exhausted window limits every session this log has named (docs/agents/muse.md A2, A3).
func (m *museReader) usageChanged(p *museParams, ts time.Time) []Event {
	u := museUsageOf(p.Window, p.Weekly)
	before := m.usage
	m.usage = u
	if !u.exhausted || before != nil && before.exhausted && before.resetAt.Equal(u.resetAt) {
		return nil
	}
	ids := make([]string, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]Event, 0, len(ids))
	for _, id := range ids {
		e := m.event(id, UsageLimited, ts)
		e.Failure = museUsageFailure(u)
		out = append(out, e)
	}
	return out
}

// museUsageOf reads a SubscriptionUsage's windows: exhausted when either is
// at 100 % or more, until the later reset of the exhausted ones (A3).
func museUsageOf(window, weekly *museWindow) *museUsage {
	u := &museUsage{}
	for _, w := range []*museWindow{window, weekly} {
		if w == nil || w.UsedPercent < 100 {
			continue
		}
		u.exhausted = true
		if at := museTime(w.ResetsAtMs); at.After(u.resetAt) {
			u.resetAt = at
		}
	}
	return u
}

// museUsageFailure is the usage limit an exhausted window means.
func museUsageFailure(u *museUsage) *Failure {
	msg := "Muse usage window exhausted"
	if !u.resetAt.IsZero() {
		msg = fmt.Sprintf("%s until %s", msg, u.resetAt.Format(time.RFC3339))
	}
	return &Failure{Class: UsageLimit, Code: "usage_window", Message: msg, ResetAt: u.resetAt}
}

// museTime is msTime for Muse's numbers, which JSON may give as floats.
func museTime(ms float64) time.Time {
	if !(ms > 0 && ms <= maxEpochMs) {
		return time.Time{}
	}
	return msTime(int64(ms))
}
