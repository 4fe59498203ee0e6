package classify

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Kimi Code CLI (TypeScript, npm @moonshot-ai/kimi-code): one wire record per
// session agent under $KIMI_CODE_HOME/sessions/<bucket>/session_<uuid>/agents/
// main/wire.jsonl (docs/agents/kimi.md Part A).

const kimiCodeName = "kimi_code"

// kimiCodeLoginHint is what a person does after an auth failure (docs/agents/kimi.md A3).
const kimiCodeLoginHint = "run `kimi login`, or fix api_key in ~/.kimi-code/config.toml"

func init() {
	register(Agent{
		Name:  kimiCodeName,
		Title: "Kimi Code",
		Home:  Home{Env: "KIMI_CODE_HOME", Dir: ".kimi-code"},
		// docs/agents/kimi.md A1: the person's agent is agents/main; other agents are sub-agents.
		Files:     []FileSet{{Pattern: "sessions/*/*/agents/main/wire.jsonl", Kind: JSONLines}},
		NewReader: func(path string, files Files) Reader { return newKimiCodeWire(path, files) },
		Recognize: recognizeKimiCode,
		LoginHint: kimiCodeLoginHint,
		// docs/agents/kimi.md A3 (no ending after a kill) and A7 (queued messages).
		Blind: "a turn whose process was killed writes no ending, and messages typed " +
			"during a turn stay in memory until it ends",
		// The CLI renames its process: comm and the whole command line read
		// "kimi-code" (2.1.0, seen in /proc); "kimi" is the name it is
		// started by. The session is not on the command line and the wire
		// file is not held open; the cwd is the session's (docs/agents/kimi.md A9).
		ReadComposer: readKimiComposer,
		Executables:  []string{"kimi-code", "kimi"},
		// docs/agents/kimi.md A9: Kimi Code takes the session_<uuid> id; -p takes
		// the next argument whatever it starts with.
		Resume: &ResumeCommand{Argv: func(id, text string) []string { return []string{"kimi", "--session=" + id, "-p", text} }},
		// docs/agents/kimi.md A1: "session_" and a uuid, as --session takes it.
		SessionID: regexp.MustCompile(`^session_` + uuidPattern + `$`),
		// Kimi speaks to Moonshot (docs/agents/kimi.md).
		Provider: "moonshot",
	})
}

// recognizeKimiCode knows Kimi Code's wire file by its place
// (agents/<agent>/wire.jsonl) or by its flat records (docs/agents/kimi.md A2).
func recognizeKimiCode(path string, head []byte) bool {
	if filepath.Base(path) == "wire.jsonl" && filepath.Base(filepath.Dir(filepath.Dir(path))) == "agents" {
		return true
	}
	return bytes.HasPrefix(head, []byte(`{"type":"metadata","protocol_version":`)) && bytes.Contains(head, []byte(`"agentId":`))
}

// kimiCodeWire reads one agents/main/wire.jsonl (docs/agents/kimi.md A2-A4).
type kimiCodeWire struct {
	session   string // session_<uuid>, the folder name
	sessionIn string // the session folder, where state.json lives
	project   string // the session's working directory, from state.json
	files     Files

	prompts map[string]bool // promptIds that started a turn
	boxes   map[string]bool // interaction ids without interaction.resolved
}

// newKimiCodeWire names the session after the folder two levels above
// agents/<agent>/ (docs/agents/kimi.md A1: "session_<uuid>, prefix included").
func newKimiCodeWire(path string, files Files) *kimiCodeWire {
	w := &kimiCodeWire{prompts: map[string]bool{}, boxes: map[string]bool{}, files: orNoFiles(files)}
	dir := filepath.Dir(path)
	if filepath.Base(filepath.Dir(dir)) == "agents" {
		w.sessionIn = filepath.Dir(filepath.Dir(dir))
		w.session = filepath.Base(w.sessionIn)
	} else {
		w.session = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	}
	w.readProject()
	return w
}

// readProject takes the working directory from the session's state.json
// (docs/agents/kimi.md A1); the bucket name holds only a hash of it. The file is small;
// it is read until it names a cwd.
func (w *kimiCodeWire) readProject() {
	if w.project != "" || w.sessionIn == "" {
		return
	}
	data, err := w.files.ReadFile(filepath.Join(w.sessionIn, "state.json"), 1<<20)
	if err != nil {
		return
	}
	var st struct {
		Cwd string `json:"cwd"`
	}
	if json.Unmarshal(data, &st) == nil {
		w.project = st.Cwd
	}
}

// kimiCodeWanted are the record types that carry signal (docs/agents/kimi.md A2, A4);
// every other type, among them the 74 KB llm.tools_snapshot, is skipped
// before decoding.
func kimiCodeWanted(typ []byte) bool {
	switch string(typ) {
	case "turn.prompt", "turn.steer", "prompt.steered", "prompt.completed",
		"llm.request", "context.append_loop_event", "usage.record",
		"turn.step.retrying", "turn.ended", "interaction.request", "interaction.resolved":
		return true
	}
	return false
}

// kimiCodeRecord holds the few fields of a wire record nudge reads.
type kimiCodeRecord struct {
	Type     string          `json:"type"`
	Kind     string          `json:"kind"`
	Time     float64         `json:"time"` // Unix milliseconds
	ID       string          `json:"id"`
	PromptID string          `json:"promptId"`
	Reason   string          `json:"reason"`
	TurnID   json.RawMessage `json:"turnId"`
	Origin   kimiCodeOrigin  `json:"origin"`
	Input    []textPart      `json:"input"`
	Content  []textPart      `json:"content"`
	Error    *kimiCodeError  `json:"error"`
}

type kimiCodeOrigin struct {
	Kind string `json:"kind"`
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// kimiCodeError is turn.ended's typed error (docs/agents/kimi.md A2, A3).
type kimiCodeError struct {
	Code    string `json:"code"`
	Name    string `json:"name"`
	Message string `json:"message"`
	Details struct {
		StatusCode int    `json:"statusCode"`
		RequestID  string `json:"requestId"`
	} `json:"details"`
}

func partsText(parts []textPart) string {
	var texts []string
	for _, p := range parts {
		if p.Type == "text" && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// Read classifies one wire line.
func (w *kimiCodeWire) Read(line []byte) []Event {
	if !kimiCodeWanted(claudeRecordType(line)) {
		return nil
	}
	var r kimiCodeRecord
	if !decodeRecord(line, &r) {
		return nil
	}
	if r.Kind == "event" {
		// Mirror records disagree with the canonical ones on time, turn and
		// error text: skip them (docs/agents/kimi.md A2).
		return nil
	}
	var ts time.Time
	if r.Time > 0 && r.Time < 1e15 {
		ts = time.UnixMilli(int64(r.Time)).UTC()
	}
	switch r.Type {
	case "turn.prompt":
		w.readProject()
		if r.PromptID != "" {
			w.prompts[r.PromptID] = true
		}
		if r.Origin.Kind != "user" {
			return []Event{w.event(TurnStarted, ts)}
		}
		return []Event{w.userMessage(partsText(r.Input), ts), w.event(TurnStarted, ts)}
	case "turn.steer":
		return []Event{w.userMessage(partsText(r.Input), ts)}
	case "prompt.steered":
		return []Event{w.userMessage(partsText(r.Content), ts)}
	case "prompt.completed":
		// A prompt a hook refused never became a turn; the person typed it
		// (docs/agents/kimi.md A4, A8).
		if r.Reason == "blocked" && !w.prompts[r.PromptID] {
			return []Event{w.userMessage("", ts)}
		}
		return nil
	case "turn.step.retrying":
		return []Event{w.event(AgentRetrying, ts)}
	case "interaction.request":
		if r.ID == "" {
			return []Event{w.event(AgentActivity, ts)}
		}
		w.boxes[r.ID] = true
		e := w.event(BoxOpened, ts)
		e.Box = r.ID
		return []Event{e}
	case "interaction.resolved":
		// Closed even when its request was read by an earlier reader (a
		// restart between the two records).
		if r.ID == "" {
			return []Event{w.event(AgentActivity, ts)}
		}
		delete(w.boxes, r.ID)
		if len(w.boxes) > 0 {
			return nil // another box is still open: the agent still waits
		}
		e := w.event(BoxClosed, ts)
		e.Box = r.ID
		return []Event{e}
	case "turn.ended":
		// turnId values are opaque and may repeat across resumes: with the
		// record's time they name this ending (docs/agents/kimi.md A2).
		return turnEvents(kimiTurnID(r.TurnID, r.Time), w.ended(&r, ts))
	}
	return []Event{w.event(AgentActivity, ts)}
}

// kimiTurnID names a turn ending by its turn id and time; "" without a turn id.
func kimiTurnID(turn json.RawMessage, at float64) string {
	if len(turn) == 0 || string(turn) == "null" {
		return ""
	}
	return string(turn) + " at " + strconv.FormatFloat(at, 'f', -1, 64)
}

func (w *kimiCodeWire) event(k Kind, ts time.Time) Event {
	return Event{Agent: kimiCodeName, Session: w.session, Project: w.project, Time: ts, Kind: k}
}

func (w *kimiCodeWire) userMessage(text string, ts time.Time) Event {
	e := w.event(UserMessage, ts)
	e.Text = text
	return e
}

// ended applies docs/agents/kimi.md A3 to the only record that ends a turn. Boxes never
// outlive their turn.
func (w *kimiCodeWire) ended(r *kimiCodeRecord, ts time.Time) []Event {
	var out []Event
	for id := range w.boxes {
		delete(w.boxes, id)
		e := w.event(BoxClosed, ts)
		e.Box = id
		out = append(out, e)
	}
	switch r.Reason {
	case "completed", "blocked":
		return append(out, w.event(TurnDone, ts))
	case "cancelled":
		e := w.event(TurnFailed, ts)
		e.Failure = &Failure{Class: Cancelled, Code: "user_cancelled", Message: "the person cancelled the turn"}
		return append(out, e)
	}
	f := kimiCodeFailure(r.Error, ts)
	e := w.event(TurnFailed, ts)
	e.Failure = &f
	return append(out, e)
}

// kimiCodeFailure classifies a failed turn's typed error by the shared
// reading (docs/failures.md; the codes of docs/agents/kimi.md A3).
// error.retryable is never read: it belongs to the code, not to the event.
func kimiCodeFailure(e *kimiCodeError, ts time.Time) Failure {
	if e == nil {
		return Failure{Class: Unknown, Rule: ruleNothing, Shape: "no error fields",
			Message: "Kimi Code ended the turn as failed without an error"}
	}
	var s failureSignals
	s.code("error.name", e.Name)
	s.code("error.code", e.Code)
	s.setStatus("error.details.statusCode", e.Details.StatusCode)
	s.text("error.message", e.Message)
	f := readFailure(s)
	f.Code, f.Message = e.Code, e.Message
	if status := e.Details.StatusCode; status != 0 {
		f.Code += "/" + strconv.Itoa(status)
	}
	switch f.Class {
	case UsageLimit:
		f.ResetAt, f.ResetUnread = readReset(e.Message, ts)
	case Auth:
		f.Hint = kimiCodeLoginHint
	}
	if e.Details.RequestID != "" {
		f.Message += " (request " + e.Details.RequestID + ")"
	}
	return f
}
