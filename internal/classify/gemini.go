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

// Gemini CLI (TypeScript, npm @google/gemini-cli): one chat record per
// session, lines of JSON appended under ~/.gemini/tmp/<project>/chats/
// (docs/agents/gemini.md §1, §2).

const geminiName = "gemini"

// geminiLoginHint is what a person does after an auth failure (docs/agents/gemini.md §4).
const geminiLoginHint = "set GEMINI_API_KEY, or run `/auth` in Gemini CLI"

func init() {
	register(Agent{
		Name:  geminiName,
		Title: "Gemini CLI",
		// docs/agents/gemini.md §1: GEMINI_CLI_HOME stands for the home
		// directory; the root is .gemini below it.
		Home: Home{Env: "GEMINI_CLI_HOME", Sub: ".gemini", Dir: ".gemini"},
		// docs/agents/gemini.md §1: a sub-agent's chat is in chats/<parent>/.
		Files:        []FileSet{{Pattern: "tmp/*/chats/session-*.jsonl", Kind: JSONLines}},
		NewReader:    func(path string, files Files) Reader { return newGeminiChat(path, files) },
		Recognize:    recognizeGemini,
		LoginHint:    geminiLoginHint,
		ReadComposer: readGeminiComposer,
		// docs/agents/gemini.md §8: an Enter within 40 ms of a paste is a
		// new line; a margin for a loaded machine.
		PasteSettle: 250 * time.Millisecond,
		// docs/agents/gemini.md §5, §6.
		Blind: "its own retries of a 5xx write nothing (by default it retries a 5xx " +
			"without end), and its dialogs and approval prompts are not recorded",
		// docs/agents/gemini.md §8: npm's bin link runs `node …/gemini`,
		// which starts `node …/bundle/gemini.js` (the same stem) as its child.
		Executables: []string{"gemini"},
		// docs/agents/gemini.md §1: the chat file's name, its start
		// (minutes) and the sessionId's first 8 digits.
		SessionID: regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d-\d\d-[0-9a-f]{8}$`),
		// docs/agents/gemini.md §4: the Gemini API of GEMINI_API_KEY; a
		// Vertex AI sign-in is in the settings, never in the records.
		Provider: "google",
	})
}

// geminiPrefix is how a chat file's name starts (docs/agents/gemini.md §1).
const geminiPrefix = "session-"

// recognizeGemini knows a chat file by its place (chats/session-*.jsonl) or
// by its metadata record (docs/agents/gemini.md §2).
func recognizeGemini(path string, head []byte) bool {
	if strings.HasPrefix(filepath.Base(path), geminiPrefix) && filepath.Ext(path) == ".jsonl" && filepath.Base(filepath.Dir(path)) == "chats" {
		return true
	}
	return bytes.HasPrefix(head, []byte(`{"sessionId":`)) && bytes.Contains(head, []byte(`"projectHash":`))
}

// geminiChat reads one chats/session-*.jsonl (docs/agents/gemini.md §2, §3).
type geminiChat struct {
	session string // the file's name without "session-" and ".jsonl"
	project string // the project root, from the project's .project_root
}

// newGeminiChat names the session after its file: the name holds the
// start time and the sessionId's first 8 digits, and a resumed session
// appends to the same file (docs/agents/gemini.md §1). The metadata record
// with the whole sessionId is only at the file's start, where a reader
// resuming at a saved offset never reads. The project is the one
// .project_root beside chats/ names.
func newGeminiChat(path string, files Files) *geminiChat {
	c := &geminiChat{session: strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), geminiPrefix), ".jsonl")}
	if data, err := orNoFiles(files).ReadFile(filepath.Join(filepath.Dir(filepath.Dir(path)), ".project_root"), 4096); err == nil {
		c.project = strings.TrimSpace(string(data))
	}
	return c
}

// geminiRecord holds the fields of a message record nudge reads.
type geminiRecord struct {
	ID        string            `json:"id"`
	Timestamp string            `json:"timestamp"`
	Type      string            `json:"type"`
	Content   json.RawMessage   `json:"content"`
	ToolCalls []json.RawMessage `json:"toolCalls"`
}

// geminiContext starts the CLI's own context message: a user message it
// writes at a session's start and again once the person declined a tool
// call, never the person's (docs/agents/gemini.md §3).
const geminiContext = "<session_context>"

// geminiCancelled is the info message of a turn the person cancelled
// (docs/agents/gemini.md §3).
const geminiCancelled = "Request cancelled."

// Read classifies one chat record. The metadata record and its updates
// ({"$set":…}, which may carry the whole message list, and
// {"$rewindTo":…}) are skipped before decoding, so a record costs what it
// holds, not the session's length (docs/agents/gemini.md §2).
func (c *geminiChat) Read(line []byte) []Event {
	if bytes.HasPrefix(line, []byte(`{"$`)) || bytes.HasPrefix(line, []byte(`{"sessionId":`)) {
		return nil
	}
	var r geminiRecord
	if !decodeRecord(line, &r) || r.ID == "" {
		return nil
	}
	ts, _ := time.Parse(time.RFC3339Nano, r.Timestamp)
	ts = ts.UTC()
	var out []Event
	switch r.Type {
	case "user":
		text, person := geminiText(r.Content)
		if !person {
			return c.events(r.ID, c.event(AgentActivity, ts))
		}
		if strings.HasPrefix(text, geminiContext) {
			return nil // the CLI's own, after a declined approval (§3)
		}
		e := c.event(UserMessage, ts)
		e.Text = text
		out = []Event{e, c.event(TurnStarted, ts)}
	case "gemini":
		// A message is appended again, whole, as its tokens and tool
		// calls arrive; one with text and without tool calls answers the
		// turn (§3).
		if text, _ := geminiText(r.Content); len(r.ToolCalls) == 0 && strings.TrimSpace(text) != "" {
			out = []Event{c.event(TurnDone, ts)}
		} else {
			out = []Event{c.event(AgentActivity, ts)}
		}
	case "error":
		var text string
		if json.Unmarshal(r.Content, &text) != nil {
			text = ""
		}
		f := geminiFailure(text, ts)
		e := c.event(TurnFailed, ts)
		e.Failure = &f
		out = []Event{e}
	case "info":
		var text string
		if json.Unmarshal(r.Content, &text) != nil || strings.TrimSpace(text) != geminiCancelled {
			return nil
		}
		e := c.event(TurnFailed, ts)
		e.Failure = &Failure{Class: Cancelled, Code: "request_cancelled", Message: "the person cancelled the request"}
		out = []Event{e}
	default:
		return nil
	}
	return c.events(r.ID, out...)
}

// events gives each event the message's id with its kind: a message that
// is appended again gives the same events (docs/durability.md).
func (c *geminiChat) events(id string, events ...Event) []Event {
	for i := range events {
		events[i].ID = id + " " + string(events[i].Kind)
	}
	return events
}

func (c *geminiChat) event(k Kind, ts time.Time) Event {
	return Event{Agent: geminiName, Session: c.session, Project: c.project, Time: ts, Kind: k}
}

// geminiText is the text of a message's content, a string or parts,
// and whether it has text: a user message of only function responses
// carries tool results back (docs/agents/gemini.md §2).
func geminiText(content json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, true
	}
	var parts []struct {
		Text    *string `json:"text"`
		Thought bool    `json:"thought"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return "", false
	}
	var texts []string
	person := false
	for _, p := range parts {
		if p.Text != nil && !p.Thought {
			person = true
			texts = append(texts, *p.Text)
		}
	}
	return strings.Join(texts, "\n"), person
}

// geminiFailure classifies the text of an error message by the shared
// reading (docs/failures.md; the texts of docs/agents/gemini.md §4): "[API
// Error: …]" around the error's message, which holds the provider's body
// when the SDK kept it.
func geminiFailure(text string, ts time.Time) Failure {
	if strings.TrimSpace(text) == "" {
		return Failure{Class: Unknown, Rule: ruleNothing, Shape: "no error fields",
			Message: "Gemini CLI recorded an error without a text"}
	}
	var s failureSignals
	s.text("content", text)
	f := readFailure(s)
	f.Message, f.Code = text, geminiBodyCode(text)
	switch f.Class {
	case UsageLimit:
		f.ResetAt, f.ResetUnread = readReset(text, ts)
	case Auth:
		f.Hint = geminiLoginHint
	}
	return f
}

// geminiBodyCode is the code and status of the Google error body a text
// embeds ("503/UNAVAILABLE"), or "" (docs/agents/gemini.md §4).
func geminiBodyCode(text string) string {
	i := strings.Index(text, `{"error":`)
	if i < 0 {
		return ""
	}
	var b struct {
		Error struct {
			Code   int    `json:"code"`
			Status string `json:"status"`
		} `json:"error"`
	}
	if json.NewDecoder(strings.NewReader(text[i:])).Decode(&b) != nil || b.Error.Code == 0 {
		return ""
	}
	return strconv.Itoa(b.Error.Code) + "/" + b.Error.Status
}
