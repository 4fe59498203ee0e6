package classify

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// claudeSamples is the folder of real Claude Code files (internal/classify/testdata/samples/claude).
var claudeSamples = filepath.Join("testdata", "samples", "claude")

func claudeAgent(t testing.TB) Agent {
	t.Helper()
	a, ok := Lookup("claude")
	if !ok {
		t.Fatal("agent claude is not registered")
	}
	return a
}

// claudeFinal is the EXPECTED.tsv view of a session: the kind of the last
// turn-ending event, "open" when a turn started after it or none ended.
func claudeFinal(events []Event) (kind string, class string, resetAt string) {
	kind, class, resetAt = "open", "-", "-"
	for _, e := range events {
		switch e.Kind {
		case TurnStarted:
			kind, class, resetAt = "open", "-", "-"
		case TurnDone:
			kind, class, resetAt = string(TurnDone), "-", "-"
		case TurnFailed:
			kind, class, resetAt = string(TurnFailed), string(e.Failure.Class), "-"
			if !e.Failure.ResetAt.IsZero() {
				resetAt = e.Failure.ResetAt.UTC().Format(time.RFC3339)
			}
		}
	}
	return kind, class, resetAt
}

func TestClaudeGoldenSamples(t *testing.T) {
	f, err := os.Open(filepath.Join(claudeSamples, "EXPECTED.tsv"))
	if err != nil {
		t.Fatalf("the Claude samples are part of the contract: %v", err)
	}
	defer f.Close()
	agent := claudeAgent(t)
	sc := bufio.NewScanner(f)
	rows := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 4 || cols[0] == "file" {
			continue
		}
		rows++
		t.Run(cols[0], func(t *testing.T) {
			events, err := readFile(filepath.Join(claudeSamples, cols[0]), agent)
			if err != nil {
				t.Fatal(err)
			}
			kind, class, resetAt := claudeFinal(events)
			if kind != cols[1] || class != cols[2] || resetAt != cols[3] {
				for _, e := range events {
					line, _ := e.MarshalLine()
					t.Logf("%s", line)
				}
				t.Errorf("got %s %s %s, want %s %s %s", kind, class, resetAt, cols[1], cols[2], cols[3])
			}
		})
	}
	if rows != 24 {
		t.Errorf("EXPECTED.tsv rows = %d, want 24", rows)
	}
}

// claudeFeed reads lines with a fresh transcript reader of a file named sess-file.jsonl.
func claudeFeed(lines ...string) []Event {
	r := newClaudeReader(filepath.Join("home", ".claude", "projects", "-p", "sess-file.jsonl"), nil)
	var out []Event
	for _, l := range lines {
		out = append(out, r.Read([]byte(l))...)
	}
	return out
}

func claudeKinds(events []Event) []Kind {
	kinds := make([]Kind, len(events))
	for i, e := range events {
		kinds[i] = e.Kind
	}
	return kinds
}

func claudeSameKinds(t *testing.T, events []Event, want ...Kind) {
	t.Helper()
	got := claudeKinds(events)
	if strings.Join(claudeKindStrings(got), " ") != strings.Join(claudeKindStrings(want), " ") {
		t.Errorf("kinds = %v, want %v", got, want)
	}
}

func claudeKindStrings(kinds []Kind) []string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return s
}

// Records in the shape of docs/agents/claude.md §3 (trimmed to the fields read).
const (
	ccTyped      = `{"type":"user","message":{"role":"user","content":"hello"},"origin":{"kind":"human"},"promptSource":"typed","turnOrigin":"human","cwd":"/home/dev/project","sessionId":"s1","timestamp":"2026-11-30T08:57:54.530Z","isSidechain":false}`
	ccQueued     = `{"type":"user","message":{"role":"user","content":"queued message while retrying"},"promptSource":"queued","origin":{"kind":"human"},"turnOrigin":"human","sessionId":"s1","timestamp":"2026-11-30T09:03:00.550Z"}`
	ccEnqueue    = `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-30T09:00:11.572Z","sessionId":"s1","content":"queued message while retrying"}`
	ccDequeue    = `{"type":"queue-operation","operation":"dequeue","timestamp":"2026-11-30T09:03:00.469Z","sessionId":"s1"}`
	ccRequestA   = `{"type":"api-request","timestamp":"2026-11-30T08:59:58.225Z","querySource":"repl_main_thread","requestDigest":"cac4"}`
	ccRequestB   = `{"type":"api-request","timestamp":"2026-11-30T08:59:59.225Z","querySource":"repl_main_thread","requestDigest":"dd01"}`
	ccEndTurn    = `{"type":"assistant","message":{"model":"claude-opus-5-5","stop_reason":"end_turn","content":[{"type":"text","text":"Hello."}]},"sessionId":"s1","timestamp":"2026-11-30T08:57:55.037Z"}`
	ccDuration   = `{"type":"system","subtype":"turn_duration","durationMs":885,"timestamp":"2026-11-30T08:57:55.304Z"}`
	ccError500   = `{"type":"assistant","isApiErrorMessage":true,"error":"server_error","apiErrorStatus":500,"apiErrorType":"api_error","message":{"model":"<synthetic>","stop_reason":"stop_sequence","content":[{"type":"text","text":"API Error: 500 Internal server error."}]},"sessionId":"s1","timestamp":"2026-11-30T08:58:07.166Z"}`
	ccAskUser    = `{"type":"assistant","message":{"model":"claude-opus-5-5","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_q","name":"AskUserQuestion","input":{"questions":[{"question":"Which colour?"}]}}]},"timestamp":"2026-11-30T08:59:13.656Z"}`
	ccAnswer     = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"Your questions have been answered: \"Which colour?\"=\"Red\".","tool_use_id":"toolu_q"}]},"toolUseResult":{"answers":{"Which colour?":"Red"}},"timestamp":"2026-11-30T08:59:25.019Z"}`
	ccBashUse    = `{"type":"assistant","message":{"model":"claude-opus-5-5","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_b","name":"Bash","input":{"command":"echo hi"}}]},"timestamp":"2026-11-30T08:58:40.266Z"}`
	ccBashResult = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"(Bash completed with no output)","tool_use_id":"toolu_b"}]},"timestamp":"2026-11-30T08:58:41.000Z"}`
	ccNoResponse = `{"type":"assistant","isApiErrorMessage":false,"madeBy":"other","message":{"model":"<synthetic>","stop_reason":"stop_sequence","content":[{"type":"text","text":"No response requested."}]},"timestamp":"2026-11-30T08:59:52.470Z"}`
)

func TestClaudePromptStartsTurn(t *testing.T) {
	events := claudeFeed(ccTyped, ccEndTurn, ccDuration)
	claudeSameKinds(t, events, UserMessage, TurnStarted, TurnDone)
	if e := events[0]; e.Text != "hello" || e.Session != "s1" || e.Project != "/home/dev/project" || e.Agent != "claude" {
		t.Errorf("user_message = %+v", e)
	}
	if want := time.Date(2026, 11, 30, 8, 57, 54, 530e6, time.UTC); !events[0].Time.Equal(want) {
		t.Errorf("time = %v, want %v", events[0].Time, want)
	}
	// turn_done once per turn: end_turn, then turn_duration, then a second end_turn block.
	claudeSameKinds(t, claudeFeed(ccTyped, ccEndTurn, ccEndTurn, ccDuration, ccTyped, ccDuration),
		UserMessage, TurnStarted, TurnDone, UserMessage, TurnStarted, TurnDone)
}

func TestClaudeSDKPromptIsAPerson(t *testing.T) {
	sdk := `{"type":"user","message":{"role":"user","content":"continue"},"promptSource":"sdk","rowSource":"local","turnOrigin":"sdk","entrypoint":"sdk-cli","sessionId":"s1"}`
	events := claudeFeed(sdk)
	claudeSameKinds(t, events, UserMessage, TurnStarted)
	if events[0].Text != "continue" {
		t.Errorf("text = %q", events[0].Text)
	}
}

func TestClaudeQueuedMessage(t *testing.T) {
	t.Run("still queued at the next record", func(t *testing.T) {
		events := claudeFeed(ccTyped, ccRequestA, ccEnqueue, ccRequestA)
		claudeSameKinds(t, events, UserMessage, TurnStarted, AgentActivity, UserMessage, AgentRetrying)
		if e := events[3]; e.Text != "queued message while retrying" || !e.Time.Equal(time.Date(2026, 11, 30, 9, 0, 11, 572e6, time.UTC)) {
			t.Errorf("queued user_message = %+v", e)
		}
	})
	t.Run("dequeued then sent by the CLI", func(t *testing.T) {
		// The sample order of interactive-main.jsonl: dequeue, 529 record, queued prompt.
		events := claudeFeed(ccTyped, ccEnqueue, ccDequeue, ccError500, ccQueued, ccEndTurn)
		claudeSameKinds(t, events, UserMessage, TurnStarted, TurnFailed, UserMessage, TurnStarted, TurnDone)
	})
	t.Run("print mode enqueue and dequeue before the prompt", func(t *testing.T) {
		sdkEnqueue := `{"type":"queue-operation","operation":"enqueue","content":"hello"}`
		sdkDequeue := `{"type":"queue-operation","operation":"dequeue"}`
		sdk := `{"type":"user","message":{"role":"user","content":"hello"},"promptSource":"sdk","rowSource":"local"}`
		claudeSameKinds(t, claudeFeed(sdkEnqueue, sdkDequeue, sdk), UserMessage, TurnStarted)
		claudeSameKinds(t, claudeFeed(sdkEnqueue, sdk), UserMessage, TurnStarted)
	})
	t.Run("still queued when the turn fails", func(t *testing.T) {
		events := claudeFeed(ccTyped, ccEnqueue, ccError500)
		claudeSameKinds(t, events, UserMessage, TurnStarted, UserMessage, TurnFailed, UserMessage)
		if got := events[4]; got.Text != "queued message while retrying" || !got.Time.Equal(events[3].Time) {
			t.Errorf("after the failure: %+v", got)
		}
	})
}

func TestClaudeAutoContinuationIsNotAPerson(t *testing.T) {
	auto := `{"type":"user","isMeta":true,"message":{"role":"user","content":"Your claude.ai usage limit has reset. Continue the task you were working on when the limit was reached; do not repeat work that is already complete."},"origin":{"kind":"auto-continuation"},"promptSource":"system","turnOrigin":"auto_continuation","timestamp":"2026-11-30T09:05:02.852Z"}`
	fired := `{"type":"system","subtype":"informational","content":"Usage limit reset · Continuing automatically","level":"notice","timestamp":"2026-11-30T09:05:02.708Z"}`
	meta := `{"type":"user","isMeta":true,"rowSource":"local","message":{"role":"user","content":"## Context Usage"}}`
	claudeSameKinds(t, claudeFeed(fired, auto, ccEndTurn), AgentActivity, TurnStarted, TurnDone)
	claudeSameKinds(t, claudeFeed(meta))
}

func TestClaudeSidechainNeverDecidesTheTurn(t *testing.T) {
	side := func(rec string) string {
		rec = strings.Replace(rec, `,"isSidechain":false`, "", 1)
		return strings.Replace(rec, `{"type":`, `{"isSidechain":true,"type":`, 1)
	}
	events := claudeFeed(ccTyped, side(ccTyped), side(ccError500), side(ccEndTurn), side(ccAskUser))
	claudeSameKinds(t, events, UserMessage, TurnStarted, AgentActivity, AgentActivity, AgentActivity, AgentActivity)
	kind, _, _ := claudeFinal(events)
	if kind != "open" {
		t.Errorf("the main turn is %s, want open", kind)
	}
}

func TestClaudeQuestionBox(t *testing.T) {
	events := claudeFeed(ccTyped, ccAskUser, ccAnswer, ccEndTurn)
	claudeSameKinds(t, events, UserMessage, TurnStarted, BoxOpened, BoxClosed, AgentActivity, TurnDone)
	if events[2].Box != "question" || events[3].Box != "question" {
		t.Errorf("boxes = %q, %q", events[2].Box, events[3].Box)
	}
	// Another tool is work, not a box.
	claudeSameKinds(t, claudeFeed(ccBashUse, ccBashResult), AgentActivity, AgentActivity)
	// A box never outlives its turn.
	claudeSameKinds(t, claudeFeed(ccAskUser, ccError500), BoxOpened, BoxClosed, TurnFailed)
}

func TestClaudeRetryByRequestDigest(t *testing.T) {
	claudeSameKinds(t, claudeFeed(ccRequestA, ccRequestA, ccRequestA), AgentActivity, AgentRetrying, AgentRetrying)
	claudeSameKinds(t, claudeFeed(ccRequestA, ccRequestB), AgentActivity, AgentActivity)
	// An assistant record between two requests: a new request, not a retry.
	claudeSameKinds(t, claudeFeed(ccRequestA, ccBashUse, ccRequestA), AgentActivity, AgentActivity, AgentActivity)
	apiError := `{"type":"system","subtype":"api_error","level":"error","error":{"status":500},"retryInMs":564,"retryAttempt":1,"maxRetries":10,"timestamp":"2026-11-30T08:55:27.871Z"}`
	claudeSameKinds(t, claudeFeed(apiError), AgentRetrying)
}

func TestClaudeNotATurn(t *testing.T) {
	// The "No response requested." placeholder on resume is not a turn.
	claudeSameKinds(t, claudeFeed(ccNoResponse))
	events := claudeFeed(ccTyped, ccError500, ccNoResponse)
	if kind, class, _ := claudeFinal(events); kind != "turn_failed" || class != "provider_error" {
		t.Errorf("final = %s %s", kind, class)
	}
	// The real excerpt holding it ends with the answered question's turn.
	events, err := readFile(filepath.Join(claudeSamples, "excerpts", "box-open-askuserquestion-then-answered.jsonl"), claudeAgent(t))
	if err != nil {
		t.Fatal(err)
	}
	var done int
	for _, e := range events {
		if e.Kind == TurnDone {
			done++
		}
		if e.Kind == TurnStarted && done > 0 {
			t.Errorf("a turn started after the answered question: %+v", e)
		}
	}
	if done != 1 {
		t.Errorf("turn_done %d times, want once", done)
	}
}

func TestClaudeHarnessMarkers(t *testing.T) {
	marker := func(text string) string {
		return `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"` + text + `"}]},"rowSource":"harness","timestamp":"2026-11-30T08:59:07.582Z"}`
	}
	for text, class := range map[string]Class{
		"[Request interrupted by user]":                         Cancelled,
		"[Request interrupted by user for tool use]":            Cancelled,
		"[This turn ended before it finished.]":                 Unknown,
		"[Request interrupted: the session ended before this…]": Unknown,
	} {
		events := claudeFeed(ccTyped, marker(text))
		claudeSameKinds(t, events, UserMessage, TurnStarted, TurnFailed)
		if f := events[2].Failure; f.Class != class || f.Message != text {
			t.Errorf("%q: failure = %+v, want class %s", text, f, class)
		}
	}
	claudeSameKinds(t, claudeFeed(marker("plain harness text")))
}

func TestClaudeLegacyPrompts(t *testing.T) {
	legacy := func(content string) string {
		return `{"type":"user","message":{"role":"user","content":` + content + `},"sessionId":"s0","timestamp":"2025-06-01T10:00:00Z"}`
	}
	claudeSameKinds(t, claudeFeed(legacy(`"fix the bug"`)), UserMessage, TurnStarted)
	claudeSameKinds(t, claudeFeed(legacy(`[{"type":"text","text":"fix it"}]`)), UserMessage, TurnStarted)
	claudeSameKinds(t, claudeFeed(legacy(`"<command-name>/clear</command-name>"`)))
	claudeSameKinds(t, claudeFeed(legacy(`"Caveat: the messages below were generated by the user while running local commands."`)))
	claudeSameKinds(t, claudeFeed(legacy(`[{"type":"text","text":"[Request interrupted by user]"}]`)), TurnFailed)
}

func TestClaudeSessionAndProject(t *testing.T) {
	noID := `{"type":"system","subtype":"api_error","timestamp":"2026-11-30T08:55:27.871Z"}`
	if e := claudeFeed(noID)[0]; e.Session != "sess-file" || e.Project != "" {
		t.Errorf("without sessionId: session %q project %q", e.Session, e.Project)
	}
	events := claudeFeed(ccTyped, noID)
	if e := events[2]; e.Session != "s1" || e.Project != "/home/dev/project" {
		t.Errorf("after a record with sessionId: session %q project %q", e.Session, e.Project)
	}
	if e := claudeFeed(`{"type":"system","subtype":"api_error"}`)[0]; !e.Time.IsZero() {
		t.Errorf("a record without timestamp has time %v", e.Time)
	}
}

func TestClaudeMalformedRecords(t *testing.T) {
	for _, line := range []string{
		``, `{`, `not json`, `{"type":"user"`, `[]`, `null`, `{"type":"api-request","requestDigest":"ab`,
		ccError500[:len(ccError500)-2], ccRequestA[:40],
	} {
		claudeSameKinds(t, claudeFeed(line))
	}
	for _, line := range []string{
		`{"type":"assistant","message":5}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":7}]}}`,
		`{"type":"assistant","isApiErrorMessage":true,"error":{"nested":true},"apiErrorStatus":"x"}`,
	} {
		_ = claudeFeed(line) // must not panic
	}
	// A field of an unexpected type does not hide the rest of the record.
	events := claudeFeed(`{"type":"assistant","isApiErrorMessage":true,"error":"server_error","apiErrorStatus":"500","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 500"}]}}`)
	claudeSameKinds(t, events, TurnFailed)
	if events[0].Failure.Class != ProviderError {
		t.Errorf("class = %s", events[0].Failure.Class)
	}
}

func TestClaudeRecordType(t *testing.T) {
	for line, want := range map[string]string{
		`{"type":"mode","mode":"normal"}`:                                               "mode",
		`{"parentUuid":null,"attachment":{"type":"environment"},"type":"attachment"}`:   "attachment",
		`{"message":{"type":"message","content":[{"type":"text"}]},"type":"assistant"}`: "assistant",
		`{"a":"x\"type\":\"user\"","b":["type"],"type" : "system"}`:                     "system",
		`{"a":"\\","type":"user"}`:                                                      "user",
		`{"message":{"type":"x"}}`:                                                      "",
		`{"type":5}`:                                                                    "",
		`{"a":"unterminated`:                                                            "",
	} {
		if got := string(claudeRecordType([]byte(line))); got != want {
			t.Errorf("%s: type %q, want %q", line, got, want)
		}
	}
}

func TestClaudeRecognize(t *testing.T) {
	a := claudeAgent(t)
	for _, c := range []struct {
		path string
		head string
		want bool
	}{
		{"/h/.claude/projects/-home-dev-project/11111111-1111-4111-8111-111111111111.jsonl", "", true},
		{"/h/.claude/projects/-p/1111/subagents/agent-a1.jsonl", "", true},
		{"/h/.claude/sessions/555.json", "", true},
		{"/tmp/x.jsonl", `{"type":"mode","mode":"normal","sessionId":"s"}` + "\n" + `{"type":"permission-mode","sessionId":"s"}`, true},
		{"/tmp/x.jsonl", `{"parentUuid":null,"isSidechain":false,"type":"user","sessionId":"s"}`, true},
		{"/tmp/555.json", `{"pid":555,"sessionId":"s","status":"idle","waitingFor":""}`, true},
		{"/tmp/x.jsonl", `{"timestamp":"2026-01-01","type":"session_meta","payload":{"id":"x"}}`, false},
		{"/tmp/x.jsonl", `{"jsonrpc":"2.0","method":"turn/started","params":{"sessionId":"s"}}`, false},
		{"/h/.codex/sessions/2026/11/30/rollout-1.jsonl", "", false},
	} {
		if got := a.Recognize(c.path, []byte(c.head)); got != c.want {
			t.Errorf("Recognize(%s, %.40q) = %v, want %v", c.path, c.head, got, c.want)
		}
	}
	// Every sample is told apart by its content alone.
	head, err := os.ReadFile(filepath.Join(claudeSamples, "success-print.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := Recognize("/elsewhere/copy.jsonl", head[:4096]); !ok || got.Name != "claude" {
		t.Errorf("Recognize(success-print head) = %v, %v", got.Name, ok)
	}
}
