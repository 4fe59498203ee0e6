package classify

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Codex CLI: one rollout per session under
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl (docs/agents/codex.md §2).

const codexName = "codex"

// codexLoginHint is what a person does after an auth failure (docs/behaviour.md §2).
const codexLoginHint = "run `codex login` (or fix OPENAI_API_KEY / the provider's env_key)"

func init() {
	register(Agent{
		Name:  codexName,
		Title: "Codex CLI",
		Home:  Home{Env: "CODEX_HOME", Dir: ".codex"},
		// docs/agents/codex.md §2: one rollout per session under the start date's folders.
		Files:     []FileSet{{Pattern: "sessions/*/*/*/rollout-*.jsonl", Kind: JSONLines}},
		NewReader: func(path string, files Files) Reader { return newCodexRollout(path, files) },
		Recognize: recognizeCodex,
		LoginHint: codexLoginHint,
		// Approval and question requests are never persisted (docs/agents/codex.md §3.1, §7).
		Blind: "approval prompts are not recorded in the rollout: nudge checks the screen before typing",
		// The native binary; the npm launcher runs as "node" (docs/agents/codex.md §7).
		Executables:  []string{"codex", "codex.exe"},
		ScreenReady:  codexScreenReady,
		ReadComposer: readCodexComposer,
		// docs/agents/codex.md §8.3: appends to the same rollout; outside a git
		// repository it needs --skip-git-repo-check. Id and prompt are
		// positionals of `resume`.
		Resume: &ResumeCommand{Argv: func(id, text string) []string {
			return []string{"codex", "exec", "--skip-git-repo-check", "resume", "--", id, text}
		}},
		// docs/agents/codex.md §2: the thread id in the rollout's name and session_meta.
		SessionID: regexp.MustCompile(`^` + uuidPattern + `$`),
		// the default model_provider; a rollout's session_meta names its own.
		Provider: "openai",
	})
}

// codexFileName is a rollout's name; the last group is the session id (§2).
var codexFileName = regexp.MustCompile(`^rollout-.*-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)

// recognizeCodex knows a rollout by its name or by its session_meta header.
func recognizeCodex(path string, head []byte) bool {
	if codexFileName.MatchString(filepath.Base(path)) {
		return true
	}
	return bytes.Contains(head, []byte(`"type":"session_meta"`)) &&
		(bytes.Contains(head, []byte(`"originator":"codex`)) || bytes.Contains(head, []byte(`"cli_version"`)))
}

// codexRollout reads one rollout file (docs/agents/codex.md §4).
type codexRollout struct {
	session string // session_meta.payload.id, at first the uuid in the file name
	project string // session_meta.payload.cwd
	// provider and model: session_meta's model_provider, the latest
	// turn_context's model (and model_provider, when it names one).
	provider, model string
	root            string // the Codex root, whose log a legacy turn's error is read from ("": none)
	files           Files

	modern bool // the file has ordinals or task_started: turns are bracketed (§1)

	turnEnded  bool                // the current turn already ended: one ending per turn
	users      map[string]struct{} // person messages of the current turn, by turn id and text
	pending    map[string]struct{} // tool calls without output yet (§7)
	streamOpen bool                // a token_count info:null with no output after it (§4.1)
	limitFull  bool                // the last rate-limit snapshot of this turn has a full window (§6)
	limitReset time.Time           // and that window's reset, when given
	last       time.Time           // the latest record time

	// The legacy format writes no turn end (§4.3).
	legacyOpen bool      // a user_message began a turn that has not ended
	answered   bool      // an agent_message came in that turn
	contexts   int       // turn_context records in that turn: the second and later are retries
	started    time.Time // that user_message's time
}

func newCodexRollout(path string, files Files) *codexRollout {
	t := &codexRollout{users: map[string]struct{}{}, pending: map[string]struct{}{},
		root: codexRoot(path), files: orNoFiles(files)}
	if m := codexFileName.FindStringSubmatch(filepath.Base(path)); m != nil {
		t.session = m[1]
	}
	return t
}

// codexRecord is the envelope of a rollout line (§3.1, §3.2).
type codexRecord struct {
	Timestamp string          `json:"timestamp"`
	Ordinal   json.RawMessage `json:"ordinal"`
	Type      string          `json:"type"`
	Payload   codexPayload    `json:"payload"`
}

// codexPayload holds the few payload fields nudge reads, of every record type.
type codexPayload struct {
	Type string `json:"type"`

	// session_meta
	ID            string `json:"id"`
	Cwd           string `json:"cwd"`
	ModelProvider string `json:"model_provider"` // also turn_context

	// turn_context
	Model string `json:"model"`

	TurnID string `json:"turn_id"`

	// response_item message / function_call / *_output
	Role     string      `json:"role"`
	Content  []codexPart `json:"content"`
	CallID   string      `json:"call_id"`
	Metadata struct {
		TurnID string   `json:"turn_id"`
		Kinds  []string `json:"content_item_kinds"`
		Items  []struct {
			Provenance struct {
				Type string `json:"type"`
			} `json:"provenance"`
		} `json:"content_item_metadata"`
	} `json:"internal_chat_message_metadata_passthrough"`

	// item_completed
	Item struct {
		Type    string      `json:"type"`
		Content []codexPart `json:"content"`
	} `json:"item"`

	// token_count
	Info       json.RawMessage  `json:"info"`
	RateLimits *codexRateLimits `json:"rate_limits"`

	// task_complete, turn_aborted
	Error  *codexError `json:"error"`
	Reason string      `json:"reason"`

	// legacy user_message / agent_message
	Message string `json:"message"`
}

type codexPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func codexText(parts []codexPart) string {
	var texts []string
	for _, p := range parts {
		switch p.Type {
		case "input_text", "text", "Text":
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// Read classifies one rollout line: a line of work read without decoding
// it (codexWork), any other decoded.
func (t *codexRollout) Read(line []byte) []Event {
	var r codexRecord
	if codexWork(line, &r) {
		return t.apply(&r)
	}
	return t.decoded(line)
}

// decoded classifies a line that must be decoded. Its record is its own:
// the decoder holds it as an interface, which would move every line's
// record to the heap, read without decoding or not.
func (t *codexRollout) decoded(line []byte) []Event {
	var r codexRecord
	if !decodeRecord(line, &r) {
		return nil
	}
	return t.apply(&r)
}

// apply classifies a record.
func (t *codexRollout) apply(r *codexRecord) []Event {
	if len(r.Ordinal) > 0 && string(r.Ordinal) != "null" {
		t.modern = true
	}
	ts, _ := time.Parse(time.RFC3339Nano, r.Timestamp)
	if !ts.IsZero() {
		t.last = ts
	}
	p := &r.Payload
	switch r.Type {
	case "session_meta":
		if p.ID != "" {
			t.session = p.ID
		}
		if p.Cwd != "" {
			t.project = p.Cwd
		}
		t.provider = cmp.Or(p.ModelProvider, t.provider)
	case "event_msg":
		return t.eventMsg(p, ts)
	case "response_item":
		return t.responseItem(p, ts)
	case "turn_context":
		t.provider, t.model = cmp.Or(p.ModelProvider, t.provider), cmp.Or(p.Model, t.model)
		if t.legacyOpen && !t.modern {
			t.contexts++
			if t.contexts > 1 {
				return []Event{t.event(AgentRetrying, ts)}
			}
		}
	}
	return nil
}

func (t *codexRollout) event(k Kind, ts time.Time) Event {
	return Event{Agent: codexName, Session: t.session, Project: t.project, Time: ts, Kind: k}
}

// eventMsg applies the event_msg rows of §4.1 and §4.3.
func (t *codexRollout) eventMsg(p *codexPayload, ts time.Time) []Event {
	switch p.Type {
	case "task_started":
		t.modern = true
		t.newTurn()
		return turnEvents(p.TurnID, []Event{t.event(TurnStarted, ts)})
	case "task_complete":
		if p.Error != nil {
			return turnEvents(p.TurnID, t.fail(codexFailure(p.Error, t.limitReset, ts), ts))
		}
		return turnEvents(p.TurnID, t.done(ts))
	case "turn_aborted":
		return turnEvents(p.TurnID, t.fail(Failure{Class: Cancelled, Code: firstNonEmptyString(p.Reason, "turn_aborted"), Message: "turn aborted: " + p.Reason}, ts))
	case "item_completed":
		switch p.Item.Type {
		case "UserMessage":
			return t.userMessage(p.TurnID, codexText(p.Item.Content), ts)
		case "":
			return nil
		}
		t.output()
		return []Event{t.event(AgentActivity, ts)}
	case "token_count":
		return t.tokenCount(p, ts)
	case "user_message":
		if t.modern {
			return t.userMessage(p.TurnID, p.Message, ts)
		}
		return t.legacyStart(p.Message, ts)
	case "agent_message":
		t.output()
		t.answered = true
		return []Event{t.event(AgentActivity, ts)}
	}
	return nil
}

// responseItem applies the response_item rows of §4.1.
func (t *codexRollout) responseItem(p *codexPayload, ts time.Time) []Event {
	switch p.Type {
	case "message":
		switch p.Role {
		case "user":
			if p.isPerson() {
				return t.userMessage(p.Metadata.TurnID, codexText(p.Content), ts)
			}
			return nil
		case "assistant":
		default:
			return nil
		}
	case "function_call", "custom_tool_call", "local_shell_call":
		if p.CallID != "" {
			t.pending[p.CallID] = struct{}{}
		}
	case "function_call_output", "custom_tool_call_output":
		delete(t.pending, p.CallID)
	case "reasoning", "web_search_call":
	default:
		return nil
	}
	t.output()
	return []Event{t.event(AgentActivity, ts)}
}

// isPerson tells a message a person (or a headless prompt) sent from the
// ones Codex writes itself: provenance "user" or kind "user.text" (§4.1).
func (p *codexPayload) isPerson() bool {
	for _, it := range p.Metadata.Items {
		if it.Provenance.Type != "" {
			return it.Provenance.Type == "user"
		}
	}
	for _, k := range p.Metadata.Kinds {
		if k == "user.text" {
			return true
		}
	}
	return false
}

// userMessage reports a person's message once per turn: it is written both
// as a response_item and as an item_completed (§4.1).
func (t *codexRollout) userMessage(turnID, text string, ts time.Time) []Event {
	key := turnID + "\x00" + text
	if _, seen := t.users[key]; seen {
		return nil
	}
	t.users[key] = struct{}{}
	e := t.event(UserMessage, ts)
	e.Text = text
	return []Event{e}
}

// output marks model output: the stream is no longer only opened.
func (t *codexRollout) output() { t.streamOpen = false }

// tokenCount applies the token_count row of §4.1: a second stream opened with
// no output in between is Codex reconnecting by itself, not a dead turn (§5).
func (t *codexRollout) tokenCount(p *codexPayload, ts time.Time) []Event {
	if p.RateLimits != nil {
		t.limitReset, t.limitFull = p.RateLimits.fullReset(ts)
	}
	if len(p.Info) == 0 || string(p.Info) == "null" {
		retry := t.streamOpen
		t.streamOpen = true
		if retry {
			return []Event{t.event(AgentRetrying, ts)}
		}
		return []Event{t.event(AgentActivity, ts)}
	}
	t.output()
	if t.legacyOpen && t.answered && !t.modern {
		return t.done(ts)
	}
	return []Event{t.event(AgentActivity, ts)}
}

// legacyStart begins a turn of the legacy format at its user_message (§4.3).
func (t *codexRollout) legacyStart(text string, ts time.Time) []Event {
	t.newTurn()
	t.legacyOpen, t.started = true, ts
	e := t.event(UserMessage, ts)
	e.Text = text
	return []Event{e, t.event(TurnStarted, ts)}
}

// newTurn forgets the previous turn.
func (t *codexRollout) newTurn() {
	t.turnEnded, t.streamOpen, t.limitFull, t.limitReset = false, false, false, time.Time{}
	t.legacyOpen, t.answered, t.contexts = false, false, 0
	clear(t.users)
	clear(t.pending)
}

// done ends the turn normally, once per turn.
func (t *codexRollout) done(ts time.Time) []Event {
	if t.turnEnded {
		return nil
	}
	t.turnEnded, t.legacyOpen = true, false
	return []Event{t.event(TurnDone, ts)}
}

// fail ends the turn with f.
func (t *codexRollout) fail(f Failure, ts time.Time) []Event {
	t.turnEnded, t.legacyOpen = true, false
	clear(t.pending)
	f.on(t.provider, "", t.model)
	e := t.event(TurnFailed, ts)
	e.Failure = &f
	return []Event{e}
}

// codexLegacyQuiet is how long a legacy rollout must stay unchanged after a
// turn without an answer before the turn counts as dead: longer than the
// CLI's own retries with default settings (docs/agents/codex.md §4.3, §5).
const codexLegacyQuiet = 60 * time.Second

var _ Settler = (*codexRollout)(nil)

// SettleAfter is the quiet after which Settle next judges a legacy turn
// that waits for an answer: by the TUI's log after codexLogQuiet, from
// silence after codexLegacyQuiet.
func (t *codexRollout) SettleAfter(quiet time.Duration) time.Duration {
	if t.modern || !t.legacyOpen || t.answered || t.turnEnded || len(t.pending) > 0 {
		return 0
	}
	for _, at := range []time.Duration{codexLogQuiet, codexLegacyQuiet} {
		if quiet < at {
			return at
		}
	}
	return 0
}

// Settle judges a legacy turn that never got an answer once the file has
// been quiet for quiet (§4.3): by the error the TUI's log gives it, else,
// after codexLegacyQuiet, from silence. Rollouts with turn ends are never
// judged so.
func (t *codexRollout) Settle(quiet time.Duration) []Event {
	if t.modern || !t.legacyOpen || t.answered || t.turnEnded || len(t.pending) > 0 || quiet < codexLogQuiet {
		return nil
	}
	if e, ok := t.turnError(); ok {
		return t.fail(codexLegacyFailure(e.message, t.limitReset, e.at), e.at)
	}
	if quiet < codexLegacyQuiet {
		return nil
	}
	f := Failure{Class: Unknown, Code: "no_answer",
		Message: "the turn ended without an answer; this Codex version records no error, so the cause is unknown"}
	if t.limitFull {
		f = Failure{Class: UsageLimit, Code: "usage_limit_exceeded", Message: "usage limit reached", ResetAt: t.limitReset}
	}
	return t.fail(f, t.last)
}

// turnError is the error the TUI's log gives the open legacy turn.
func (t *codexRollout) turnError() (codexTurnError, bool) {
	if t.root == "" || t.session == "" {
		return codexTurnError{}, false
	}
	log, err := t.files.ReadTail(filepath.Join(t.root, filepath.FromSlash(codexLogName)), codexLogTail)
	if err != nil {
		return codexTurnError{}, false
	}
	return codexLogFind(log, t.session, t.started)
}

func firstNonEmptyString(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
