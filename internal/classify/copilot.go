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

// GitHub Copilot CLI (npm @github/copilot, a native executable): one event
// log per session, lines of JSON appended under
// ~/.copilot/session-state/<sessionId>/events.jsonl (docs/agents/copilot.md
// §1, §2).

const copilotName = "copilot"

// copilotLoginHint is what a person does after an auth failure (docs/agents/copilot.md §4).
const copilotLoginHint = "run `/login` in Copilot CLI, or set COPILOT_GITHUB_TOKEN " +
	"(COPILOT_PROVIDER_API_KEY for your own provider)"

func init() {
	register(Agent{
		Name:  copilotName,
		Title: "GitHub Copilot CLI",
		// docs/agents/copilot.md §1: COPILOT_HOME is the root itself.
		Home:         Home{Env: "COPILOT_HOME", Dir: ".copilot"},
		Files:        []FileSet{{Pattern: "session-state/*/events.jsonl", Kind: JSONLines}},
		NewReader:    func(path string, files Files) Reader { return newCopilotEvents(path, files) },
		Recognize:    recognizeCopilot,
		LoginHint:    copilotLoginHint,
		ReadComposer: readCopilotComposer,
		// docs/agents/copilot.md §5, §6.
		Blind: "its own retries (5 per request) write nothing until the last one fails, " +
			"and its dialogs other than tool approvals are not recorded",
		// docs/agents/copilot.md §8: npm's bin link runs `node …/copilot`,
		// which starts the native executable `…/copilot-linux-x64/copilot`.
		Executables: []string{"copilot"},
		// docs/agents/copilot.md §1: the session folder is the sessionId, a UUID.
		SessionID: regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`),
		// docs/agents/copilot.md §4: GitHub Copilot's own model routing,
		// unless the person brought a provider (COPILOT_PROVIDER_BASE_URL).
		Provider: "github",
	})
}

// copilotEventsFile is the name of a session's event log (docs/agents/copilot.md §1).
const copilotEventsFile = "events.jsonl"

// recognizeCopilot knows an event log by its place
// (session-state/<id>/events.jsonl) or by its first record (docs/agents/copilot.md §2).
func recognizeCopilot(path string, head []byte) bool {
	if filepath.Base(path) == copilotEventsFile && filepath.Base(filepath.Dir(filepath.Dir(path))) == "session-state" {
		return true
	}
	return bytes.HasPrefix(head, []byte(`{"type":"session.start"`)) && bytes.Contains(head, []byte(`"producer":"copilot-agent"`))
}

// copilotEvents reads one session-state/<id>/events.jsonl (docs/agents/copilot.md §2, §3).
type copilotEvents struct {
	session string // the session folder's name, the sessionId
	project string // the working directory, from workspace.yaml or session.start
	model   string // the model selected last
	boxes   map[string]bool
}

// newCopilotEvents names the session after its folder and reads the
// working directory from the workspace.yaml beside the log: session.start,
// which holds it too, is only at the log's start, where a reader resuming
// at a saved offset never reads (docs/agents/copilot.md §1).
func newCopilotEvents(path string, files Files) *copilotEvents {
	c := &copilotEvents{session: filepath.Base(filepath.Dir(path)), boxes: map[string]bool{}}
	if data, err := orNoFiles(files).ReadFile(filepath.Join(filepath.Dir(path), "workspace.yaml"), 64<<10); err == nil {
		c.project = workspaceCwd(data)
	}
	return c
}

// workspaceCwd is the `cwd:` of a workspace.yaml, a plain or a
// double-quoted YAML scalar; "" when it has none.
func workspaceCwd(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		v, ok := strings.CutPrefix(line, "cwd: ")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, `"`) {
			if u, err := strconv.Unquote(v); err == nil {
				return u
			}
			return ""
		}
		return strings.Trim(v, "'")
	}
	return ""
}

// copilotRecord holds the fields of an event nudge reads.
type copilotRecord struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	AgentID   string          `json:"agentId"`
	Data      json.RawMessage `json:"data"`
}

// copilotData is the union of the data fields nudge reads.
type copilotData struct {
	Content      string            `json:"content"`      // user.message, assistant.message
	ToolRequests []json.RawMessage `json:"toolRequests"` // assistant.message
	Context      struct {          // session.start
		Cwd string `json:"cwd"`
	} `json:"context"`
	SelectedModel string `json:"selectedModel"` // session.start
	NewModel      string `json:"newModel"`      // session.model_change
	RequestID     string `json:"requestId"`     // permission.requested, .completed
	Reason        string `json:"reason"`        // abort
	copilotError
}

// copilotError is the data of a session.error (docs/agents/copilot.md §4).
type copilotError struct {
	ErrorType            string `json:"errorType"`
	ErrorCode            string `json:"errorCode"`
	ProviderErrorType    string `json:"providerErrorType"`
	Message              string `json:"message"`
	StatusCode           int    `json:"statusCode"`
	OriginatingMessageID string `json:"originatingMessageId"`
}

// copilotSkipped are the records read without decoding: the system
// prompt, tens of kilobytes, and the usage accounting.
var copilotSkipped = [][]byte{
	[]byte(`{"type":"system.message"`),
	[]byte(`{"type":"session.usage_record"`),
	[]byte(`{"type":"session.shutdown"`),
}

// Read classifies one event (docs/agents/copilot.md §3).
func (c *copilotEvents) Read(line []byte) []Event {
	for _, p := range copilotSkipped {
		if bytes.HasPrefix(line, p) {
			return nil
		}
	}
	var r copilotRecord
	if !decodeRecord(line, &r) || r.ID == "" || r.Type == "" {
		return nil
	}
	var d copilotData
	if !bytes.HasPrefix(r.Data, []byte("{")) || !decodeRecord(r.Data, &d) {
		return nil // every event's data is an object
	}
	ts, _ := time.Parse(time.RFC3339Nano, r.Timestamp)
	ts = ts.UTC()
	if r.AgentID != "" {
		// A sub-agent's records: its answers and failures are not the turn's.
		return recordEvents(r.ID, c.event(AgentActivity, ts))
	}
	var out []Event
	switch r.Type {
	case "session.start":
		if d.Context.Cwd != "" {
			c.project = d.Context.Cwd
		}
		c.model = d.SelectedModel
		return nil
	case "session.model_change":
		c.model = d.NewModel
		return nil
	case "user.message":
		e := c.event(UserMessage, ts)
		e.Text = d.Content
		out = []Event{e, c.event(TurnStarted, ts)}
	case "assistant.message":
		// An answer without tool requests ends the turn (§3).
		if len(d.ToolRequests) == 0 && strings.TrimSpace(d.Content) != "" {
			out = []Event{c.event(TurnDone, ts)}
		} else {
			out = []Event{c.event(AgentActivity, ts)}
		}
	case "assistant.turn_start", "assistant.reasoning",
		"tool.execution_start", "tool.execution_complete", "tool.user_requested":
		out = []Event{c.event(AgentActivity, ts)}
	case "permission.requested":
		if d.RequestID == "" {
			return nil
		}
		c.boxes[d.RequestID] = true
		e := c.event(BoxOpened, ts)
		e.Box = d.RequestID
		out = []Event{e}
	case "permission.completed":
		// Closed even when its request was read by an earlier reader.
		if d.RequestID == "" {
			return nil
		}
		delete(c.boxes, d.RequestID)
		if len(c.boxes) > 0 {
			return nil // another approval is still open
		}
		e := c.event(BoxClosed, ts)
		e.Box = d.RequestID
		out = []Event{e}
	case "session.error":
		// An error of the session itself (attaching, a slash command)
		// names no message: no turn died (§4).
		if d.OriginatingMessageID == "" {
			return nil
		}
		f := copilotFailure(d.copilotError, ts)
		f.on("", "", c.model)
		e := c.event(TurnFailed, ts)
		e.Failure = &f
		out = []Event{e}
	case "abort":
		e := c.event(TurnFailed, ts)
		e.Failure = &Failure{Class: Cancelled, Code: "abort/" + d.Reason, Message: "the turn was aborted (" + d.Reason + ")"}
		if d.Reason == "" {
			e.Failure.Code, e.Failure.Message = "abort", "the turn was aborted"
		}
		out = []Event{e}
	default:
		// assistant.turn_end among them: it ends one model call, not the
		// person's turn, and follows its answer (§3).
		return nil
	}
	return recordEvents(r.ID, out...)
}

func (c *copilotEvents) event(k Kind, ts time.Time) Event {
	return Event{Agent: copilotName, Session: c.session, Project: c.project, Time: ts, Kind: k}
}

// copilotFailure classifies a session.error by the shared reading
// (docs/failures.md; the records of docs/agents/copilot.md §4): its
// category, the provider's code and type, the HTTP status and the message.
func copilotFailure(d copilotError, ts time.Time) Failure {
	var s failureSignals
	s.code("errorType", d.ErrorType)
	s.code("errorCode", d.ErrorCode)
	s.code("providerErrorType", d.ProviderErrorType)
	s.setStatus("statusCode", d.StatusCode)
	s.text("message", d.Message)
	f := readFailure(s)
	f.Message, f.Code = d.Message, d.ErrorType
	if d.ErrorCode != "" {
		f.Code += "/" + d.ErrorCode
	}
	if f.Message == "" {
		f.Message = "Copilot CLI recorded an error without a message"
	}
	switch f.Class {
	case UsageLimit:
		f.ResetAt, f.ResetUnread = readReset(d.Message, ts)
	case Auth:
		f.Hint = copilotLoginHint
	}
	return f
}

// readCopilotComposer reads Copilot CLI's prompt, the ruled prompt Claude
// Code draws too, without a placeholder (docs/agents/copilot.md §7).
func readCopilotComposer(screen string, caret Caret) Composer {
	return readRuledPrompt(screen, caret, nil)
}
