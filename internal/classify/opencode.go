package classify

import (
	"bytes"
	"encoding/json"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OpenCode: the durable event log in its SQLite database and the live event
// stream of each process with a server (docs/agents/opencode.md §2-§4). Both
// arrive as one JSON object per record: a stream event as /event sends it
// ({"id","type","properties"}), a /global/event frame ({"payload":…}), or a
// database row as the `sync` payload OpenCode itself uses for durable events
// ({"type":"sync","syncEvent":{"id","type":"message.updated.1","data"}}).

const openCodeName = "opencode"

// openCodeLoginHint is what a person does after an auth failure (docs/behaviour.md §2).
const openCodeLoginHint = "run `opencode auth login` (or fix the provider's API key in opencode.json)"

// openCodeLivePrefix starts the path of a live stream's records
// (OpenCodeLivePath).
const openCodeLivePrefix = "opencode-sse://"

// openCodeQuotaWait: a retry scheduled further away than this is OpenCode
// sleeping until a quota resets (docs/behaviour.md §1, docs/agents/opencode.md §6.2).
const openCodeQuotaWait = 10 * time.Minute

func init() {
	register(Agent{
		Name:  openCodeName,
		Title: "OpenCode",
		Home:  Home{Env: "XDG_DATA_HOME", Sub: "opencode", Dir: ".local/share/opencode"},
		// docs/agents/opencode.md §2.1: one SQLite database for every OpenCode
		// process, $XDG_DATA_HOME/opencode/opencode.db (XDG on macOS too); the
		// live state comes from the event streams of processes with a server.
		// Every process appends to log/opencode.log as it starts (§2.3; older
		// versions wrote log/<time>.log): a sign to look for its server.
		Files: []FileSet{
			{Pattern: "opencode.db", Kind: Database},
			{Pattern: "log/*.log", Kind: Wake},
		},
		NewReader: newOpenCodeReader,
		Recognize: recognizeOpenCode,
		LoginHint: openCodeLoginHint,
		// docs/agents/opencode.md §2.4, §3: a plain TUI opens no port.
		Blind:       "an OpenCode TUI started without --port shows only its database: its own retries, quota sleeps and open boxes are not visible, and a continuation needs a terminal nudge can type into",
		Executables: []string{"opencode", "opencode.exe", ".opencode"},
		// docs/agents/opencode.md §8 (5): its own instance on the same database;
		// the message is the positional after "--".
		Resume: &ResumeCommand{Argv: func(id, text string) []string { return []string{"opencode", "run", "--session", id, "--", text} }},
		// docs/agents/opencode.md §2.1: "ses_", 12 hex digits of time and counter,
		// then 14 base-62 characters.
		SessionID: regexp.MustCompile(`^ses_[0-9A-Za-z]{26}$`),
	})
}

// OpenCodeLivePath is the path of the records of a session's live event
// stream from the server of process pid at addr (host:port):
// opencode-sse://<pid>@<addr>/<session>. internal/watch hands the stream's
// events out as records of it.
func OpenCodeLivePath(pid int, addr, session string) string {
	return openCodeLivePrefix + strconv.Itoa(pid) + "@" + addr + "/" + session
}

// OpenCodeLiveTarget splits a live record path (OpenCodeLivePath) into the
// process, its server and the session.
func OpenCodeLiveTarget(path string) (pid int, addr, session string, ok bool) {
	rest, ok := strings.CutPrefix(path, openCodeLivePrefix)
	if !ok {
		return 0, "", "", false
	}
	p, rest, ok1 := strings.Cut(rest, "@")
	addr, session, ok2 := strings.Cut(rest, "/")
	pid, err := strconv.Atoi(p)
	if !ok1 || !ok2 || err != nil || session == "" {
		return 0, "", "", false
	}
	return pid, addr, session, true
}

// sqliteMagic starts every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// recognizeOpenCode knows the database by name and magic, and event lines
// by OpenCode's session ids in their properties.
func recognizeOpenCode(path string, head []byte) bool {
	if strings.HasPrefix(path, openCodeLivePrefix) {
		return true
	}
	if bytes.HasPrefix(head, sqliteMagic) {
		return strings.Contains(filepath.Base(path), "opencode") && strings.HasSuffix(path, ".db")
	}
	return bytes.Contains(head, []byte(`"syncEvent"`)) ||
		bytes.Contains(head, []byte(`"properties":{`)) && bytes.Contains(head, []byte(`"sessionID":"ses_`))
}

// openCodeReader reads one database or one process's stream.
type openCodeReader struct {
	pid      int       // the process of a live stream; 0 for the database
	ref      time.Time // the latest absolute time seen, to date event ids
	sessions map[string]*openCodeSession
}

// openCodeSession is what the reader remembers of one session.
type openCodeSession struct {
	project   string
	users     map[string]bool // user message ids; true once announced
	ended     map[string]bool // assistant messages whose ending was reported
	working   map[string]bool // assistant messages reported working
	boxes     map[string]bool // open permission and question prompts
	limit     *Failure        // the last status was a quota sleep
	overflow  bool            // a context overflow was announced: the compaction step ends the turn
	turnStart bool            // a user message arrived: the next busy starts a turn
	// undecided is a database-only turn whose last step ended with no error
	// and no finish: an abort during OpenCode's retry wait, or the first
	// step of a context overflow, told apart by what follows (§6.4).
	undecided *Event
}

func newOpenCodeReader(path string, _ Files) Reader {
	r := &openCodeReader{sessions: map[string]*openCodeSession{}}
	r.pid, _, _, _ = OpenCodeLiveTarget(path)
	if r.pid != 0 || strings.HasSuffix(path, ".db") {
		return openCodeListed{r}
	}
	return r
}

// openCodeListed reads a database or a live server, whose records
// internal/watch lists.
type openCodeListed struct{ *openCodeReader }

// A database's reader settles the turns it left undecided.
var (
	_ Listed  = openCodeListed{}
	_ Settler = openCodeListed{}
)

// Listed marks a reader of listed records.
func (openCodeListed) Listed() {}

func (r *openCodeReader) session(id string) *openCodeSession {
	s := r.sessions[id]
	if s == nil {
		s = &openCodeSession{users: map[string]bool{}, ended: map[string]bool{}, working: map[string]bool{}, boxes: map[string]bool{}}
		r.sessions[id] = s
	}
	return s
}

// openCodeLine is any of the three record shapes.
type openCodeLine struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Properties json.RawMessage `json:"properties"`
	Payload    json.RawMessage `json:"payload"`
	SyncEvent  *struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	} `json:"syncEvent"`
}

// openCodeProps is the union of the properties nudge reads (§4).
type openCodeProps struct {
	SessionID  string           `json:"sessionID"`
	Info       *openCodeMessage `json:"info"`
	Part       *openCodePart    `json:"part"`
	Status     *openCodeStatus  `json:"status"`
	Error      *openCodeError   `json:"error"`
	ID         string           `json:"id"`
	RequestID  string           `json:"requestID"`
	Permission string           `json:"permission"`
	Type       string           `json:"type"` // permission.updated (older SDKs)
}

type openCodeMessage struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Directory string `json:"directory"` // session info
	Mode      string `json:"mode"`
	Finish    string `json:"finish"`
	Path      struct {
		Cwd string `json:"cwd"`
	} `json:"path"`
	Time struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
		Updated   int64 `json:"updated"`
	} `json:"time"`
	Error *openCodeError `json:"error"`
	// the provider and model an assistant message was asked of
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
}

type openCodePart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	MessageID string `json:"messageID"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
}

type openCodeStatus struct {
	Type    string `json:"type"`
	Attempt int    `json:"attempt"`
	Message string `json:"message"`
	Next    int64  `json:"next"`
	Action  *struct {
		Reason string `json:"reason"`
	} `json:"action"`
}

type openCodeError struct {
	Name string `json:"name"`
	Data struct {
		Message         string            `json:"message"`
		StatusCode      int               `json:"statusCode"`
		IsRetryable     bool              `json:"isRetryable"`
		ResponseHeaders map[string]string `json:"responseHeaders"`
		ResponseBody    string            `json:"responseBody"`
	} `json:"data"`
}

// Read classifies one record.
func (r *openCodeReader) Read(record []byte) []Event {
	var l openCodeLine
	if json.Unmarshal(record, &l) != nil {
		return nil
	}
	if len(l.Payload) > 0 && l.Type == "" {
		if json.Unmarshal(l.Payload, &l) != nil {
			return nil
		}
	}
	if l.Type == "sync" {
		if l.SyncEvent == nil {
			return nil
		}
		typ := l.SyncEvent.Type
		if i := strings.LastIndexByte(typ, '.'); i > 0 && claudeDigits(typ[i+1:]) {
			typ = typ[:i]
		}
		l.ID, l.Type, l.Properties = l.SyncEvent.ID, typ, l.SyncEvent.Data
	}
	var p openCodeProps
	if len(l.Properties) == 0 || json.Unmarshal(l.Properties, &p) != nil {
		return nil
	}
	if p.SessionID == "" && p.Info != nil && strings.HasPrefix(p.Info.ID, "ses_") {
		p.SessionID = p.Info.ID
	}
	if p.SessionID == "" {
		return nil
	}
	s := r.session(p.SessionID)
	at := r.idTime(l.ID)
	ev := func(kind Kind, t time.Time) Event {
		return Event{Agent: openCodeName, Session: p.SessionID, Project: s.project, Time: t, Kind: kind, ID: l.ID}
	}
	out := r.decide(s, l.Type, &p)
	return append(out, r.record(s, l.Type, &p, at, ev)...)
}

// record applies one record of a session (§4).
func (r *openCodeReader) record(s *openCodeSession, typ string, p *openCodeProps, at time.Time, ev func(Kind, time.Time) Event) []Event {
	switch typ {
	case "session.created", "session.updated":
		if i := p.Info; i != nil {
			r.see(i.Time.Updated)
			if i.Directory != "" {
				s.project = i.Directory
			}
		}
	case "message.updated":
		if p.Info != nil {
			return r.message(s, p.Info, ev)
		}
	case "message.part.updated":
		if p.Part != nil {
			return r.part(s, p.Part, ev, at)
		}
	case "session.status":
		if p.Status != nil {
			return r.status(s, p.Status, ev, at)
		}
	case "session.error":
		if p.Error != nil && p.Error.Name == "ContextOverflowError" {
			s.overflow = true
		}
	case "permission.asked", "permission.updated", "question.asked":
		if p.ID == "" || s.boxes[p.ID] {
			return nil
		}
		s.boxes[p.ID] = true
		box := "question"
		if strings.HasPrefix(typ, "permission") {
			box = "permission"
			if name := firstNonEmptyString(p.Permission, p.Type); name != "" {
				box += ": " + name
			}
		}
		e := ev(BoxOpened, at)
		e.Box = box
		if r.pid != 0 {
			e.Process = &Process{PID: r.pid, Status: StatusWaiting, Waiting: box}
		}
		return []Event{e}
	case "permission.replied", "question.replied", "question.rejected":
		id := firstNonEmptyString(p.RequestID, p.ID)
		if !s.boxes[id] && id != "" && len(s.boxes) == 0 {
			return nil
		}
		delete(s.boxes, id)
		if len(s.boxes) > 0 {
			return nil // another box is still open: the agent still waits
		}
		e := ev(BoxClosed, at)
		e.Box = strings.SplitN(typ, ".", 2)[0]
		return []Event{e}
	}
	return nil
}

// message handles a message's new state (§4.2, §6.4).
func (r *openCodeReader) message(s *openCodeSession, m *openCodeMessage, ev func(Kind, time.Time) Event) []Event {
	r.see(m.Time.Created)
	r.see(m.Time.Completed)
	switch m.Role {
	case "user":
		if _, known := s.users[m.ID]; !known && m.ID != "" {
			s.users[m.ID] = false
		}
		return nil
	case "assistant":
	default:
		return nil
	}
	if m.Path.Cwd != "" {
		s.project = m.Path.Cwd
	}
	if m.Time.Completed == 0 {
		if s.working[m.ID] {
			return nil
		}
		s.working[m.ID] = true
		return []Event{ev(AgentActivity, msTime(m.Time.Created))}
	}
	if s.ended[m.ID] {
		return nil
	}
	delete(s.working, m.ID)
	at := msTime(m.Time.Completed)
	switch {
	case m.Error != nil:
		s.ended[m.ID] = true
		f := openCodeFailure(m.Error, at)
		f.on(m.ProviderID, "", m.ModelID)
		if f.Class == UsageLimit && f.ResetAt.IsZero() && s.limit != nil {
			f.ResetAt = s.limit.ResetAt
		}
		return r.turnEnd(s, ev(TurnFailed, at), &f)
	case m.Finish == "tool-calls":
		s.ended[m.ID] = true
		return nil
	case m.Finish != "":
		s.ended[m.ID] = true
		return r.turnEnd(s, ev(TurnDone, at), nil)
	case s.overflow:
		// A step of a context overflow: the compaction step's last
		// update carries the error and ends the turn (§4.3); the same
		// row may first be written ended without it.
		return nil
	default:
		// Aborted during OpenCode's retry wait: no error, no finish (§7).
		s.ended[m.ID] = true
		f := Failure{Class: Cancelled, Code: "aborted", Message: "the turn was stopped while OpenCode waited to retry"}
		if l := s.limit; l != nil {
			f = *l
			f.Class = UsageLimit
		}
		e := ev(TurnFailed, at)
		if r.pid == 0 {
			// The database never holds the live-only session.error of a
			// context overflow: what follows decides (decide, Settle).
			e.Failure, s.undecided = &f, &e
			return nil
		}
		return r.turnEnd(s, e, &f)
	}
}

// decide settles a database-only turn left undecided by the record that
// follows it in the same session: OpenCode's compaction (its user message,
// a compaction part, a compaction step) means a context overflow, whose
// compaction step ends the turn; anything else means the abort it looked
// like (§4.3, §6.4, §7).
func (r *openCodeReader) decide(s *openCodeSession, typ string, p *openCodeProps) []Event {
	e := s.undecided
	if e == nil {
		return nil
	}
	switch {
	case typ == "session.created", typ == "session.updated":
		return nil // bookkeeping
	case typ == "message.updated" && p.Info != nil && p.Info.Role == "user":
		return nil // the compaction message, or a person's: its part tells
	case typ == "message.part.updated" && p.Part != nil && p.Part.Type == "compaction",
		typ == "message.updated" && p.Info != nil && p.Info.Mode == "compaction":
		s.undecided, s.overflow = nil, true
		return nil
	}
	s.undecided = nil
	return r.turnEnd(s, *e, e.Failure)
}

// openCodeDecideQuiet is how long a database must stay unchanged before a
// turn left undecided is taken for an abort: OpenCode writes the
// compaction of an overflow at once (§4.3).
const openCodeDecideQuiet = 5 * time.Second

var _ Settler = (*openCodeReader)(nil)

// SettleAfter is openCodeDecideQuiet while a turn is undecided.
func (r *openCodeReader) SettleAfter(quiet time.Duration) time.Duration {
	if quiet >= openCodeDecideQuiet {
		return 0
	}
	for _, s := range r.sessions {
		if s.undecided != nil {
			return openCodeDecideQuiet
		}
	}
	return 0
}

// Settle reports the turns still undecided once the database has been
// quiet for openCodeDecideQuiet: nothing followed, so they were aborts.
func (r *openCodeReader) Settle(quiet time.Duration) []Event {
	if quiet < openCodeDecideQuiet {
		return nil
	}
	var out []Event
	for _, id := range slices.Sorted(maps.Keys(r.sessions)) {
		if s := r.sessions[id]; s.undecided != nil {
			e := s.undecided
			s.undecided = nil
			out = append(out, r.turnEnd(s, *e, e.Failure)...)
		}
	}
	return out
}

// turnEnd reports a turn's ending and forgets what belonged to the turn.
func (r *openCodeReader) turnEnd(s *openCodeSession, e Event, f *Failure) []Event {
	e.Failure = f
	s.limit, s.overflow, s.turnStart = nil, false, false
	return []Event{e}
}

// part handles a part's new state: a person's text, or the agent at work.
func (r *openCodeReader) part(s *openCodeSession, p *openCodePart, ev func(Kind, time.Time) Event, at time.Time) []Event {
	announced, isUser := s.users[p.MessageID]
	switch {
	case isUser:
		if announced || p.Type != "text" || p.Synthetic || p.Ignored {
			return nil
		}
		s.users[p.MessageID] = true
		s.turnStart = true
		e := ev(UserMessage, at)
		e.Text = p.Text
		return []Event{e}
	case p.Type == "retry":
		return []Event{ev(AgentRetrying, at)}
	case p.Type == "step-start", p.Type == "tool":
		return []Event{ev(AgentActivity, at)}
	}
	return nil
}

// status handles a session.status event (§4.1, §6.2).
func (r *openCodeReader) status(s *openCodeSession, st *openCodeStatus, ev func(Kind, time.Time) Event, at time.Time) []Event {
	var e Event
	proc := StatusBusy
	switch st.Type {
	case "idle":
		s.limit = nil
		e, proc = ev(AgentIdle, at), StatusIdle
	case "retry":
		if f, ok := openCodeQuotaSleep(st, at); ok {
			s.limit = &f
			e = ev(UsageLimited, at)
			e.Failure = &f
		} else {
			// OpenCode's own retry: the turn is alive, nothing has failed (docs/behaviour.md §2).
			s.limit = nil
			e = ev(AgentRetrying, at)
		}
	default: // busy, and any newer status type means working (§1)
		s.limit = nil
		kind := AgentActivity
		if s.turnStart {
			kind, s.turnStart = TurnStarted, false
		}
		e = ev(kind, at)
	}
	if r.pid != 0 {
		e.Process = &Process{PID: r.pid, Status: proc}
		if len(s.boxes) > 0 && proc == StatusBusy {
			e.Process.Status, e.Process.Waiting = StatusWaiting, "a box"
		}
	}
	return []Event{e}
}

// openCodeQuotaSleep tells a retry status that waits for a quota (§6.2). at
// is when the status was emitted; a record without an event id (the live
// snapshot of /session/status) was emitted just now.
func openCodeQuotaSleep(st *openCodeStatus, at time.Time) (Failure, bool) {
	reason := ""
	if st.Action != nil {
		reason = st.Action.Reason
	}
	if at.IsZero() {
		at = time.Now()
	}
	next := msTime(st.Next)
	quota := reason == "account_rate_limit" || reason == "free_tier_limit" ||
		strings.Contains(strings.ToLower(st.Message), "usage limit") ||
		!next.IsZero() && next.Sub(at) > openCodeQuotaWait
	if !quota {
		return Failure{}, false
	}
	return Failure{Class: UsageLimit, Code: firstNonEmptyString(reason, "retry"), Message: st.Message, ResetAt: next}, true
}

// idTime dates an event id (§2.1): its 12 hex digits hold (unix ms mod
// 2^36)·4096 + a counter; the full time is the one nearest a known time.
func (r *openCodeReader) idTime(id string) time.Time {
	if len(id) < 16 || id[3] != '_' {
		return time.Time{}
	}
	v, err := strconv.ParseUint(id[4:16], 16, 64)
	if err != nil {
		return time.Time{}
	}
	const span = int64(1) << 36
	low := int64(v >> 12)
	ref := r.ref
	if ref.IsZero() {
		ref = time.Now()
	}
	base := ref.UnixMilli()
	ms := base - base%span + low
	switch {
	case ms-base > span/2:
		ms -= span
	case base-ms > span/2:
		ms += span
	}
	return time.UnixMilli(ms).UTC()
}

// see notes an absolute time the records gave.
func (r *openCodeReader) see(ms int64) {
	if t := msTime(ms); t.After(r.ref) {
		r.ref = t
	}
}

// maxEpochMs is the last millisecond of year 9999: later times are nonsense
// and cannot be written as RFC 3339 (an event holding one could not be saved).
const maxEpochMs = 253402300799999

// msTime turns epoch milliseconds into a time; zero for none or nonsense.
func msTime(ms int64) time.Time {
	if ms <= 0 || ms > maxEpochMs {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
