package classify

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Claude Code: transcripts under projects/<dir>/<session>.jsonl and the live
// registry under sessions/<pid>.json (docs/agents/claude.md §2).

const claudeName = "claude"

// claudeLoginHint is what a person does after an auth failure (docs/behaviour.md §2).
const claudeLoginHint = "run `claude /login` (or fix ANTHROPIC_API_KEY)"

func init() {
	register(Agent{
		Name:  claudeName,
		Title: "Claude Code",
		Home:  Home{Env: "CLAUDE_CONFIG_DIR", Dir: ".claude"},
		// docs/agents/claude.md §2: transcripts projects/<project-dir>/<session-id>.jsonl
		// (sub-agent transcripts sit one level deeper and are not matched); the live
		// registry sessions/<pid>.json, rewritten whole, removed when the CLI exits.
		Files: []FileSet{
			{Pattern: "projects/*/*.jsonl", Kind: JSONLines},
			{Pattern: "sessions/*.json", Kind: Snapshot},
		},
		NewReader: newClaudeReader,
		Recognize: recognizeClaude,
		LoginHint: claudeLoginHint,
		// The live registry shows open boxes and idleness, so no screen
		// check is needed (docs/agents/claude.md §7.1).
		ReadComposer: readClaudeComposer,
		Executables:  []string{"claude", "claude.exe"},
		// docs/agents/claude.md §9.3: appends to the same transcript; -p is a
		// switch, the prompt the positional after "--".
		Resume: &ResumeCommand{Argv: func(id, text string) []string { return []string{"claude", "--resume", id, "-p", "--", text} }},
		// docs/agents/claude.md §2: sessionId, also the transcript's file name.
		SessionID: regexp.MustCompile(`^` + uuidPattern + `$`),
		// docs/agents/claude.md §2: the Anthropic API, unless configured otherwise.
		Provider: "anthropic",
	})
}

// newClaudeReader picks the registry reader for sessions/<pid>.json and the
// transcript reader for everything else.
func newClaudeReader(path string, _ Files) Reader {
	if isClaudeRegistryPath(path) {
		return newClaudeRegistry(path)
	}
	return newClaudeTranscript(path)
}

// isClaudeRegistryPath tells a live-registry file: a .json file in a folder
// named "sessions" (docs/agents/claude.md §7.1).
func isClaudeRegistryPath(path string) bool {
	return filepath.Ext(path) == ".json" && filepath.Base(filepath.Dir(path)) == "sessions"
}

// recognizeClaude knows Claude Code's files by their place or by their first bytes.
func recognizeClaude(path string, head []byte) bool {
	if isClaudeRegistryPath(path) && claudeDigits(strings.TrimSuffix(filepath.Base(path), ".json")) {
		return true
	}
	if filepath.Ext(path) == ".jsonl" {
		dir := filepath.Dir(path)
		if filepath.Base(filepath.Dir(dir)) == "projects" || (filepath.Base(dir) == "subagents" && strings.Contains(path, "projects")) {
			return true
		}
	}
	if !bytes.Contains(head, []byte(`"sessionId"`)) {
		return false
	}
	for _, marker := range claudeHeadMarkers {
		if bytes.Contains(head, []byte(marker)) {
			return true
		}
	}
	return false
}

// claudeHeadMarkers are fields and record types only Claude Code writes
// (docs/agents/claude.md §3, §7.1).
var claudeHeadMarkers = []string{
	`"isSidechain"`, `"isApiErrorMessage"`, `"userType"`, `"leafUuid"`,
	`"type":"queue-operation"`, `"type":"permission-mode"`, `"type":"file-history-snapshot"`,
	`"waitingFor"`,
}

func claudeDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// claudeTranscript reads one session transcript (docs/agents/claude.md §4.1).
type claudeTranscript struct {
	session string // the latest sessionId seen, at first the file name
	project string // the latest cwd seen

	turnEnded  bool                // the current turn already ended: turn_done is emitted once per turn
	questions  map[string]struct{} // AskUserQuestion tool_use ids without a tool_result yet
	lastDigest string              // requestDigest of the previous api-request, cleared by any assistant record
	queued     *claudeQueued       // a message enqueued while the agent was busy and not dequeued yet
	limitReset time.Time           // reset time of the latest usage-limit failure
	record     string              // the uuid of the record being read: the ID of its events
	model      string              // the model of the latest request or answer: what a dead turn asked
}

// claudeQueued is a person's message waiting in the CLI's queue (§5).
type claudeQueued struct {
	text      string
	time      time.Time
	announced bool
}

func newClaudeTranscript(path string) *claudeTranscript {
	return &claudeTranscript{
		session:   strings.TrimSuffix(filepath.Base(path), ".jsonl"),
		questions: map[string]struct{}{},
	}
}

// claudeRecord holds the few fields of a transcript record nudge reads.
type claudeRecord struct {
	Type        string        `json:"type"`
	Subtype     string        `json:"subtype"`
	SessionID   string        `json:"sessionId"`
	Cwd         string        `json:"cwd"`
	Timestamp   string        `json:"timestamp"`
	UUID        string        `json:"uuid"`
	IsSidechain bool          `json:"isSidechain"`
	IsMeta      bool          `json:"isMeta"`
	Message     claudeMessage `json:"message"`

	// user provenance (§3.1)
	RowSource    string `json:"rowSource"`
	PromptSource string `json:"promptSource"`
	TurnOrigin   string `json:"turnOrigin"`
	Origin       struct {
		Kind string `json:"kind"`
	} `json:"origin"`

	// the dead-turn marker (§3.2)
	// Its fields take any JSON type (flex.go): versions not captured here
	// may write them differently.
	IsAPIErrorMessage flexBool    `json:"isApiErrorMessage"`
	Error             claudeError `json:"error"` // a category string; an object in other versions and on system/api_error
	APIErrorStatus    flexInt     `json:"apiErrorStatus"`
	APIError          flexString  `json:"apiError"`
	APIErrorType      flexString  `json:"apiErrorType"`
	APIErrorParams    struct {
		RateLimitInfo *claudeQuota `json:"rate_limit_info"`
	} `json:"apiErrorParams"`
	QuotaLimits      *claudeQuota `json:"quotaLimits"`
	ResendCannotCure flexBool     `json:"resendCannotCure"`

	// system, queue-operation, api-request (§3.3, §3.4)
	Content       json.RawMessage `json:"content"`
	Operation     string          `json:"operation"`
	RequestDigest string          `json:"requestDigest"`
}

// claudeQuota is quotaLimits and apiErrorParams.rate_limit_info (§8.1).
type claudeQuota struct {
	Status   flexString   `json:"status"`
	ResetsAt flexUnixTime `json:"resetsAt"` // Unix seconds
}

type claudeMessage struct {
	Model      string        `json:"model"`
	StopReason string        `json:"stop_reason"`
	Content    claudeContent `json:"content"`
}

// claudeContent is message.content: a plain string or an array of blocks.
type claudeContent struct {
	Text   string
	Blocks []claudeBlock
}

type claudeBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	ToolUseID string `json:"tool_use_id"`
}

// UnmarshalJSON accepts both shapes; anything else reads as empty content.
func (c *claudeContent) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		_ = json.Unmarshal(b, &c.Text)
		return nil
	}
	if json.Unmarshal(b, &c.Blocks) == nil {
		var texts []string
		for _, bl := range c.Blocks {
			if bl.Type == "text" && bl.Text != "" {
				texts = append(texts, bl.Text)
			}
		}
		c.Text = strings.Join(texts, "\n")
	}
	return nil
}

func (c claudeContent) has(blockType string) bool {
	for _, b := range c.Blocks {
		if b.Type == blockType {
			return true
		}
	}
	return false
}

// claudeWanted are the record types that carry signal (§3); every other
// type is skipped before decoding.
func claudeWanted(typ []byte) bool {
	switch string(typ) {
	case "user", "assistant", "system", "queue-operation", "api-request":
		return true
	}
	return false
}

// Read classifies one transcript line.
func (t *claudeTranscript) Read(line []byte) []Event {
	typ := claudeRecordType(line)
	if !claudeWanted(typ) {
		return nil
	}
	var r claudeRecord
	switch {
	case string(typ) == "api-request":
		// One per HTTP attempt and large: three plain strings are read
		// without decoding it; a cut-off line is still refused.
		if !bytes.HasSuffix(bytes.TrimSpace(line), []byte("}")) {
			return nil
		}
		r.Type = "api-request"
		r.Timestamp = string(claudeTopLevelString(line, "timestamp"))
		r.SessionID = string(claudeTopLevelString(line, "sessionId"))
		r.RequestDigest = string(claudeTopLevelString(line, "requestDigest"))
		r.Message.Model = claudeRequestModel(line)
	case string(typ) == "assistant" && claudeWork(line, &r):
		// An answer or a tool call, read without decoding it.
	case string(typ) == "user" && len(t.questions) == 0 && claudeToolResults(line, &r):
		// Results of tool calls, none a question's answer, read without
		// decoding them.
	default:
		return t.decoded(line)
	}
	return t.apply(&r)
}

// decoded classifies a line that must be decoded. Its record is its own:
// the decoder holds it as an interface, which would move every line's
// record to the heap, read without decoding or not.
func (t *claudeTranscript) decoded(line []byte) []Event {
	r := new(claudeRecord)
	if !decodeRecord(line, r) {
		return nil
	}
	return t.apply(r)
}

// apply classifies a record read from a line.
func (t *claudeTranscript) apply(r *claudeRecord) []Event {
	if r.SessionID != "" {
		t.session = r.SessionID
	}
	if r.Cwd != "" {
		t.project = r.Cwd
	}
	t.record = r.UUID
	ts, _ := time.Parse(time.RFC3339Nano, r.Timestamp)

	if r.Type == "queue-operation" {
		t.queue(r, ts)
		return nil
	}
	var out []Event
	if t.queued != nil && !t.queued.announced && !t.isPrompt(r) {
		// The message is still queued after the next record: the person
		// stepped in while the agent was busy (§4.1 row 16).
		t.queued.announced = true
		out = append(out, t.userMessage(t.queued.text, t.queued.time))
	}
	if r.IsSidechain {
		// A sub-agent's record never decides the main turn.
		return append(out, t.event(AgentActivity, ts))
	}
	switch r.Type {
	case "user":
		return append(out, t.user(r, ts)...)
	case "assistant":
		return append(out, t.assistant(r, ts)...)
	case "system":
		return append(out, t.system(r, ts)...)
	case "api-request":
		return append(out, t.apiRequest(r, ts))
	}
	return out
}

func (t *claudeTranscript) event(k Kind, ts time.Time) Event {
	return Event{Agent: claudeName, Session: t.session, Project: t.project, Time: ts, Kind: k, ID: t.record}
}

func (t *claudeTranscript) userMessage(text string, ts time.Time) Event {
	e := t.event(UserMessage, ts)
	e.Text = text
	return e
}

// queue follows the CLI's message queue (§3.4, §5).
func (t *claudeTranscript) queue(r *claudeRecord, ts time.Time) {
	switch r.Operation {
	case "enqueue":
		t.queued = &claudeQueued{text: claudeString(r.Content), time: ts}
	case "dequeue":
		t.queued = nil
	}
}

// claudeInterrupts are the harness markers of a person's cancel (§4.1 row 1).
var claudeInterrupts = map[string]bool{
	"[Request interrupted by user]":              true,
	"[Request interrupted by user for tool use]": true,
}

// claudeNotPrompt are the text prefixes of user records that are not a
// person's prompt in transcripts without provenance fields (§3.1).
var claudeNotPrompt = []string{"<command-", "<local-command-", "<bash-", "Caveat:", "[Request interrupted"}

// legacy tells a user record written before provenance fields existed.
func (r *claudeRecord) legacy() bool {
	return r.PromptSource == "" && r.Origin.Kind == "" && r.RowSource == "" && r.TurnOrigin == ""
}

func (r *claudeRecord) autoContinuation() bool {
	return r.Origin.Kind == "auto-continuation" || r.TurnOrigin == "auto_continuation"
}

// isPrompt tells a person's message: typed, queued, sdk, or an old-format
// prompt (§3.1, §5).
func (t *claudeTranscript) isPrompt(r *claudeRecord) bool {
	if r.Type != "user" || r.IsMeta || r.IsSidechain || r.RowSource == "harness" ||
		r.autoContinuation() || r.Message.Content.has("tool_result") {
		return false
	}
	switch r.PromptSource {
	case "typed", "queued", "sdk":
		return true
	case "":
	default:
		return false
	}
	if r.Origin.Kind != "" {
		return r.Origin.Kind == "human"
	}
	text := strings.TrimSpace(r.Message.Content.Text)
	if text == "" && len(r.Message.Content.Blocks) == 0 {
		return false
	}
	for _, p := range claudeNotPrompt {
		if strings.HasPrefix(text, p) {
			return false
		}
	}
	return true
}

// user applies rows 1–6 of §4.1.
func (t *claudeTranscript) user(r *claudeRecord, ts time.Time) []Event {
	text := strings.TrimSpace(r.Message.Content.Text)
	if r.RowSource == "harness" || r.legacy() && claudeInterrupts[text] {
		switch {
		case claudeInterrupts[text]:
			return t.fail(Failure{Class: Cancelled, Code: "interrupted", Message: text}, ts)
		case r.RowSource == "harness" && strings.HasPrefix(text, "["):
			return t.fail(Failure{Class: Unknown, Code: "turn_ended", Message: text}, ts)
		}
		return nil
	}
	if r.Message.Content.has("tool_result") {
		var out []Event
		for _, b := range r.Message.Content.Blocks {
			if _, open := t.questions[b.ToolUseID]; b.Type == "tool_result" && open {
				delete(t.questions, b.ToolUseID)
				e := t.event(BoxClosed, ts)
				e.Box = claudeQuestionBox
				out = append(out, e)
			}
		}
		return append(out, t.event(AgentActivity, ts))
	}
	if r.autoContinuation() {
		// The CLI's own usage-limit continuation: a turn, not a person.
		return []Event{t.startTurn(ts)}
	}
	if !t.isPrompt(r) {
		return nil
	}
	t.queued = nil
	return []Event{t.userMessage(r.Message.Content.Text, ts), t.startTurn(ts)}
}

func (t *claudeTranscript) startTurn(ts time.Time) Event {
	t.turnEnded, t.limitReset = false, time.Time{}
	return t.event(TurnStarted, ts)
}

// claudeQuestionBox names the box an AskUserQuestion tool_use opens (docs/agents/claude.md §7.4).
const claudeQuestionBox = "question"

// assistant applies rows 7–10 of §4.1.
func (t *claudeTranscript) assistant(r *claudeRecord, ts time.Time) []Event {
	t.lastDigest = ""
	if r.IsAPIErrorMessage {
		return t.fail(claudeFailure(r, ts), ts)
	}
	if m := r.Message.Model; m != "" && m != "<synthetic>" {
		t.model = m
	}
	if r.Message.Model == "<synthetic>" {
		// Placeholders such as "No response requested." are not a turn.
		return nil
	}
	if r.Message.StopReason == "end_turn" {
		return t.done(ts)
	}
	var out []Event
	for _, b := range r.Message.Content.Blocks {
		if b.Type == "tool_use" && b.Name == "AskUserQuestion" && b.ID != "" {
			t.questions[b.ID] = struct{}{}
			e := t.event(BoxOpened, ts)
			e.Box = claudeQuestionBox
			out = append(out, e)
		}
	}
	if out == nil {
		out = []Event{t.event(AgentActivity, ts)}
	}
	return out
}

// system applies rows 11, 13–15 of §4.1.
func (t *claudeTranscript) system(r *claudeRecord, ts time.Time) []Event {
	switch r.Subtype {
	case "api_error":
		return []Event{t.event(AgentRetrying, ts)}
	case "turn_duration":
		return t.done(ts)
	case "informational":
		return t.informational(claudeString(r.Content), ts)
	}
	return nil
}

// informational reads the CLI's notices about its own usage-limit wait (§8.2).
func (t *claudeTranscript) informational(content string, ts time.Time) []Event {
	armed, stopped := claudeAutoContinueArmed(content), claudeAutoContinueStopped(content)
	switch {
	case armed || stopped:
		e := t.event(UsageLimited, ts)
		e.AutoContinue = armed
		reset := t.limitReset
		if reset.IsZero() && armed {
			reset = claudeAutoContinueAt(content, ts)
		}
		e.Failure = &Failure{Class: UsageLimit, Code: "usage_limit_reached", Message: content, ResetAt: reset}
		return []Event{e}
	case claudeAutoContinueFired(content):
		return []Event{t.event(AgentActivity, ts)}
	}
	return nil
}

// apiRequest applies row 12 of §4.1: the same request sent again is the
// CLI retrying by itself, the only trace of it in interactive mode (§6).
func (t *claudeTranscript) apiRequest(r *claudeRecord, ts time.Time) Event {
	if r.Message.Model != "" {
		t.model = r.Message.Model
	}
	retry := r.RequestDigest != "" && r.RequestDigest == t.lastDigest
	t.lastDigest = r.RequestDigest
	if retry {
		return t.event(AgentRetrying, ts)
	}
	return t.event(AgentActivity, ts)
}

// done ends the turn normally, once per turn.
func (t *claudeTranscript) done(ts time.Time) []Event {
	if t.turnEnded {
		return nil
	}
	out := t.closeQuestions(ts)
	t.turnEnded = true
	return append(out, t.event(TurnDone, ts))
}

// fail ends the turn with f. A message still waiting in the queue is sent
// by the CLI after the failure: the person already stepped in (§5).
func (t *claudeTranscript) fail(f Failure, ts time.Time) []Event {
	out := t.closeQuestions(ts)
	t.turnEnded = true
	if f.Class == UsageLimit && !f.ResetAt.IsZero() {
		t.limitReset = f.ResetAt
	}
	f.on("", claudeGateway(f.Message), t.model)
	e := t.event(TurnFailed, ts)
	e.Failure = &f
	out = append(out, e)
	if t.queued != nil {
		t.queued.announced = true
		out = append(out, t.userMessage(t.queued.text, ts))
	}
	return out
}

// closeQuestions closes question boxes left open when the turn ends: no box
// outlives its turn.
func (t *claudeTranscript) closeQuestions(ts time.Time) []Event {
	var out []Event
	for id := range t.questions {
		delete(t.questions, id)
		e := t.event(BoxClosed, ts)
		e.Box = claudeQuestionBox
		out = append(out, e)
	}
	return out
}

// claudeString decodes a JSON string value, or "" for any other value.
func claudeString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// claudeTypePrefix is how most bookkeeping lines start (docs/agents/claude.md §3).
var claudeTypePrefix = []byte(`{"type":"`)

// claudeRecordType returns the value of the record's top-level "type" key
// without decoding the record, or nil. Records with their type first are
// read at once; others (user, assistant, attachment records put it after
// large objects) by a scan that tracks nesting and strings.
func claudeRecordType(line []byte) []byte {
	if bytes.HasPrefix(line, claudeTypePrefix) {
		rest := line[len(claudeTypePrefix):]
		if end := bytes.IndexByte(rest, '"'); end >= 0 {
			return rest[:end]
		}
		return nil
	}
	return claudeTopLevelString(line, "type")
}

// claudeTopLevelString finds the string value of key in the top-level
// object of line, or nil.
func claudeTopLevelString(line []byte, key string) []byte {
	depth, wantKey := 0, false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"':
			end := claudeStringEnd(line, i+1)
			if end < 0 {
				return nil
			}
			if depth == 1 && wantKey && string(line[i+1:end]) == key {
				j := claudeSkipSpace(line, end+1)
				if j < len(line) && line[j] == ':' {
					j = claudeSkipSpace(line, j+1)
					if j < len(line) && line[j] == '"' {
						if e := claudeStringEnd(line, j+1); e >= 0 {
							return line[j+1 : e]
						}
					}
				}
				return nil
			}
			wantKey = false
			i = end
		case '{':
			depth++
			wantKey = depth == 1
		case '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			wantKey = depth == 1
		}
	}
	return nil
}

// claudeStringEnd returns the index of the quote closing the JSON string
// that starts at from, or -1.
func claudeStringEnd(line []byte, from int) int {
	for from <= len(line) {
		k := bytes.IndexByte(line[from:], '"')
		if k < 0 {
			return -1
		}
		k += from
		n := 0
		for b := k - 1; b >= from && line[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return k
		}
		from = k + 1
	}
	return -1
}

func claudeSkipSpace(line []byte, i int) int {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n') {
		i++
	}
	return i
}

// claudeRequestModel is the model an api-request record asked, as the CLI
// writes it: its params begin with the model (docs/agents/claude.md §3.4).
// "" when the line does not read so.
func claudeRequestModel(line []byte) string {
	const head = `"params":{"model":"`
	i := bytes.Index(line, []byte(head))
	if i < 0 {
		return ""
	}
	rest := line[i+len(head):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 || !utf8.Valid(rest[:end]) {
		return ""
	}
	return string(rest[:end])
}

// claudeGatewayText is where the CLI's error text names the endpoint it
// was configured with: "check your inference gateway (127.0.0.1:18101)"
// (docs/agents/claude.md §4.3).
var claudeGatewayText = regexp.MustCompile(`inference gateway \(([^()\s]{1,200})\)`)

// claudeGateway is the endpoint a dead turn's text names, or "".
func claudeGateway(text string) string {
	if m := claudeGatewayText.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}
