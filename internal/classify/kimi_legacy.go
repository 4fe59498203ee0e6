package classify

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Legacy kimi-cli (Python, PyPI kimi-cli): wire records under
// $KIMI_SHARE_DIR/sessions/<md5(workdir)>/<uuid>/wire.jsonl, and the error
// text of a dead turn only in $KIMI_SHARE_DIR/logs/kimi.log
// (docs/agents/kimi.md Part B). The wire reader pairs its failed turns with the
// log lines through the root's kimiLogBook (kimi_legacy_log.go).

const kimiLegacyName = "kimi"

// kimiLegacyLoginHint is what a person does after an auth failure (docs/agents/kimi.md B4).
const kimiLegacyLoginHint = "run `kimi login` (or /login in the Kimi shell)"

func init() {
	register(Agent{
		Name:  kimiLegacyName,
		Title: "Kimi CLI",
		Home:  Home{Env: "KIMI_SHARE_DIR", Dir: ".kimi"},
		// docs/agents/kimi.md B1, B3: the legacy CLI's wire says a turn failed, its log says why.
		Files: []FileSet{
			{Pattern: "sessions/*/*/wire.jsonl", Kind: JSONLines},
			{Pattern: "logs/kimi.log"},
		},
		NewReader: newKimiLegacyReader,
		Recognize: recognizeKimiLegacy,
		LoginHint: kimiLegacyLoginHint,
		// docs/agents/kimi.md B6.
		Blind: "the wire record says only that a turn failed; the cause is read from logs/kimi.log, " +
			"without which the failure is unknown",
		Executables: []string{"kimi"},
		// docs/agents/kimi.md B5: the legacy CLI needs --print to run headless.
		Resume: &ResumeCommand{
			Argv:       func(id, text string) []string { return []string{"kimi", "--session=" + id, "--print", "-p", text} },
			TextOption: true,
		},
		// docs/agents/kimi.md B1: the session's folder, a bare uuid.
		SessionID: regexp.MustCompile(`^` + uuidPattern + `$`),
		// kimi-cli speaks to Moonshot (docs/agents/kimi.md).
		Provider: "moonshot",
	})
}

// newKimiLegacyReader picks the log reader for logs/kimi.log and the wire
// reader for everything else.
func newKimiLegacyReader(path string, files Files) Reader {
	if isKimiLogPath(path) {
		return newKimiLogReader(path)
	}
	return newKimiLegacyWire(path, orNoFiles(files))
}

// isKimiLogPath tells the CLI's log: kimi.log, or a rotated kimi.*.log, in a
// folder named logs (docs/agents/kimi.md B1).
func isKimiLogPath(path string) bool {
	base := filepath.Base(path)
	return filepath.Base(filepath.Dir(path)) == "logs" && strings.HasPrefix(base, "kimi") &&
		strings.HasSuffix(base, ".log") && !strings.HasPrefix(base, "kimi-code")
}

// recognizeKimiLegacy knows the legacy files by the log's place or by the
// Python envelope with spaces after ':' (docs/agents/kimi.md B2).
func recognizeKimiLegacy(path string, head []byte) bool {
	if isKimiLogPath(path) {
		return true
	}
	return bytes.HasPrefix(head, []byte(`{"type": "metadata", "protocol_version": "`)) ||
		bytes.HasPrefix(head, []byte(`{"timestamp": `)) && bytes.Contains(head, []byte(`"message": {"type": "`))
}

// kimiLegacyWire reads one session's wire.jsonl (docs/agents/kimi.md B2, B4).
type kimiLegacyWire struct {
	session string // the bare uuid, the folder name
	project string // the work dir whose md5 names the bucket, from kimi.json
	book    *kimiLogBook
	files   Files // where the book reads the end of the logs on a miss

	interrupted   bool      // the turn's last step ended with StepInterrupted
	interruptedAt time.Time // when
	boxes         map[string]bool
	questions     map[string]string // tool_call_id → open QuestionRequest id
}

func newKimiLegacyWire(path string, files Files) *kimiLegacyWire {
	dir := filepath.Dir(path)
	w := &kimiLegacyWire{session: filepath.Base(dir), files: files, boxes: map[string]bool{}, questions: map[string]string{}}
	bucket := filepath.Dir(dir)
	if root := filepath.Dir(filepath.Dir(bucket)); filepath.Base(filepath.Dir(bucket)) == "sessions" {
		w.book = kimiLogBookFor(root)
		w.project = kimiLegacyWorkDir(files, root, filepath.Base(bucket))
	}
	return w
}

// kimiLegacyWorkDir finds in <root>/kimi.json the work dir whose bucket is
// named bucket: md5 of the path, with "<kaos>_" before it for a non-local
// backend (docs/agents/kimi.md B1). "" when unknown.
func kimiLegacyWorkDir(files Files, root, bucket string) string {
	data, err := files.ReadFile(filepath.Join(root, "kimi.json"), 4<<20)
	if err != nil {
		return ""
	}
	var cfg struct {
		WorkDirs []struct {
			Path string `json:"path"`
			Kaos string `json:"kaos"`
		} `json:"work_dirs"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return ""
	}
	for _, wd := range cfg.WorkDirs {
		sum := md5.Sum([]byte(wd.Path))
		name := hex.EncodeToString(sum[:])
		if wd.Kaos != "" && wd.Kaos != "local" {
			name = wd.Kaos + "_" + name
		}
		if name == bucket {
			return wd.Path
		}
	}
	return ""
}

// kimiLegacyRecord is one envelope line (docs/agents/kimi.md B2).
type kimiLegacyRecord struct {
	Timestamp float64 `json:"timestamp"` // Unix seconds
	Message   struct {
		Type    string            `json:"type"`
		Payload kimiLegacyPayload `json:"payload"`
	} `json:"message"`
}

type kimiLegacyPayload struct {
	UserInput  json.RawMessage `json:"user_input"`
	ID         string          `json:"id"`
	RequestID  string          `json:"request_id"`
	ToolCallID string          `json:"tool_call_id"`
}

// kimiLegacyText is user_input as text: a string, or its text parts joined.
func kimiLegacyText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []textPart
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	return partsText(parts)
}

// Read classifies one wire line.
func (w *kimiLegacyWire) Read(line []byte) []Event {
	var r kimiLegacyRecord
	if !decodeRecord(line, &r) {
		return nil
	}
	var ts time.Time
	if r.Timestamp > 0 && r.Timestamp < 1e11 {
		// Python writes microseconds; a float64 holds them exactly at this size.
		ts = time.UnixMicro(int64(math.Round(r.Timestamp * 1e6))).UTC()
	}
	p := &r.Message.Payload
	switch r.Message.Type {
	case "":
		return nil // the metadata line, or not an envelope
	case "TurnBegin":
		w.interrupted = false
		return []Event{w.userMessage(kimiLegacyText(p.UserInput), ts), w.event(TurnStarted, ts)}
	case "SteerInput":
		return []Event{w.userMessage(kimiLegacyText(p.UserInput), ts)}
	case "StepBegin":
		w.interrupted = false
	case "StepRetry":
		return []Event{w.event(AgentRetrying, ts)}
	case "StepInterrupted":
		// Only the error path writes it; TurnEnd follows (docs/agents/kimi.md B2).
		w.interrupted, w.interruptedAt = true, ts
		return nil
	case "TurnEnd":
		return w.turnEnd(ts)
	case "ApprovalRequest":
		return w.openBox(p.ID, ts)
	case "ApprovalResponse", "ApprovalRequestResolved":
		return w.closeBox(p.RequestID, ts)
	case "QuestionRequest":
		// Its answer is never written: the ToolResult of its tool call, or
		// the turn's end, closes it.
		if p.ToolCallID != "" && p.ID != "" {
			w.questions[p.ToolCallID] = p.ID
		}
		return w.openBox(p.ID, ts)
	case "ToolResult":
		if id, ok := w.questions[p.ToolCallID]; ok {
			delete(w.questions, p.ToolCallID)
			return append(w.closeBox(id, ts), w.event(AgentActivity, ts))
		}
	}
	return []Event{w.event(AgentActivity, ts)}
}

func (w *kimiLegacyWire) event(k Kind, ts time.Time) Event {
	return Event{Agent: kimiLegacyName, Session: w.session, Project: w.project, Time: ts, Kind: k}
}

func (w *kimiLegacyWire) userMessage(text string, ts time.Time) Event {
	e := w.event(UserMessage, ts)
	e.Text = text
	return e
}

func (w *kimiLegacyWire) openBox(id string, ts time.Time) []Event {
	if id == "" {
		return []Event{w.event(AgentActivity, ts)}
	}
	w.boxes[id] = true
	e := w.event(BoxOpened, ts)
	e.Box = id
	return []Event{e}
}

func (w *kimiLegacyWire) closeBox(id string, ts time.Time) []Event {
	if id == "" {
		return []Event{w.event(AgentActivity, ts)}
	}
	delete(w.boxes, id)
	if len(w.boxes) > 0 {
		return nil // another box is still open: the agent still waits
	}
	e := w.event(BoxClosed, ts)
	e.Box = id
	return []Event{e}
}

// turnEnd applies docs/agents/kimi.md B4: StepInterrupted then TurnEnd is a dead turn
// whose cause is the paired log line; TurnEnd alone is done unless the log
// says the person cancelled or the step limit stopped it.
func (w *kimiLegacyWire) turnEnd(ts time.Time) []Event {
	var out []Event
	for id := range w.boxes {
		out = append(out, w.closeBox(id, ts)...)
	}
	clear(w.questions)
	interrupted, at := w.interrupted, w.interruptedAt
	w.interrupted = false
	if interrupted {
		if at.IsZero() {
			at = ts
		}
		var line *kimiLogLine
		if w.book != nil {
			line = w.book.find(w.files, w.session, at, kimiLogFailed, true)
		}
		f := kimiLegacyFailure(line)
		e := w.event(TurnFailed, ts)
		e.Failure = &f
		return append(out, e)
	}
	if w.book != nil {
		if line := w.book.find(w.files, w.session, ts, kimiLogStopped, false); line != nil {
			f := kimiLegacyFailure(line)
			e := w.event(TurnFailed, ts)
			e.Failure = &f
			return append(out, e)
		}
	}
	return append(out, w.event(TurnDone, ts))
}

// kimiLegacyFailure classifies a dead turn by its log line, per the table of
// docs/agents/kimi.md B4; without one the cause is unknown (B6).
func kimiLegacyFailure(line *kimiLogLine) Failure {
	if line == nil {
		return Failure{Class: Unknown, Code: "StepInterrupted",
			Message: "Kimi's turn failed; no matching error line in logs/kimi.log"}
	}
	var f Failure
	switch line.kind {
	case kimiLogCancelled:
		f = Failure{Class: Cancelled, Rule: ruleType, Field: "log line"}
	case kimiLogMaxSteps:
		f = Failure{Class: Unknown, Rule: ruleType, Field: "log line"}
	default:
		var s failureSignals
		s.code("log error type", line.errType)
		s.text("log message", line.text)
		f = readFailure(s)
		if f.Class == UsageLimit {
			f.ResetAt, f.ResetUnread = readReset(line.text, line.at)
		}
	}
	f.Code, f.Message = line.code(), line.text
	if line.requestID != "" {
		f.Message += " (request " + line.requestID + ")"
	}
	if f.Class == Auth {
		f.Hint = kimiLegacyLoginHint
	}
	return f
}
