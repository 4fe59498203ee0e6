package classify

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/internal/watch/disk"
)

// codexSamples is the folder of real Codex CLI rollouts (internal/classify/testdata/samples/codex).
var codexSamples = filepath.Join("testdata", "samples", "codex")

func codexAgent(t testing.TB) Agent {
	t.Helper()
	a, ok := Lookup("codex")
	if !ok {
		t.Fatal("agent codex is not registered")
	}
	return a
}

// codexReadSettled reads a rollout as a finished session: every line, then
// the judgement a file quiet for long gets (EXPECTED.tsv's legacy rows).
func codexReadSettled(t *testing.T, path string) []Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := codexAgent(t).NewReader(path, disk.Files{})
	var events []Event
	if err := eachRecord(f, MaxRecordBytes, func(line []byte) { events = append(events, r.Read(line)...) }, func(int) {}); err != nil {
		t.Fatal(err)
	}
	return append(events, r.(Settler).Settle(time.Hour)...)
}

func TestCodexGoldenSamples(t *testing.T) {
	f, err := os.Open(filepath.Join(codexSamples, "EXPECTED.tsv"))
	if err != nil {
		t.Fatalf("the Codex samples are part of the contract: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	rows := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 4 || cols[0] == "file" {
			continue
		}
		rows++
		t.Run(cols[0], func(t *testing.T) {
			path := filepath.Join(codexSamples, cols[0])
			events := codexReadSettled(t, path)
			kind, class, resetAt := claudeFinal(events)
			if kind != cols[1] || class != cols[2] || resetAt != cols[3] {
				for _, e := range events {
					line, _ := e.MarshalLine()
					t.Logf("%s", line)
				}
				t.Errorf("got %s %s %s, want %s %s %s", kind, class, resetAt, cols[1], cols[2], cols[3])
			}
			for _, e := range events {
				if e.Agent != "codex" || e.Session == "" || e.Project != "/home/dev/project" {
					t.Fatalf("event without agent, session or project: %+v", e)
				}
				if e.Kind == AgentRetrying && cols[0] == "success.jsonl" {
					t.Errorf("a clean success reads as a retry: %+v", e)
				}
			}
			// A one-turn headless run has no dead turn before its end record.
			multiTurn := strings.HasPrefix(cols[0], "tui-") || strings.HasPrefix(cols[0], "approval-")
			for _, e := range events[:max(len(events)-1, 0)] {
				if e.Kind == TurnFailed && !multiTurn {
					t.Errorf("dead turn before the end: %+v", e)
				}
			}
		})
	}
	if rows != 21 {
		t.Errorf("EXPECTED.tsv rows = %d, want 21", rows)
	}
}

// Through ReadFile (what `nudge classify` does) the legacy judgement needs
// the file to have been quiet; a freshly written copy is not judged yet.
func TestCodexReadFileSettlesOnlyQuietLegacyFiles(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(codexSamples, "old-0.98.0-api500.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rollout-2026-11-30T08-59-11-01a22bad-f973-7f92-b079-c7f07fd379b6.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := readFile(path, codexAgent(t))
	if err != nil {
		t.Fatal(err)
	}
	if kind, _, _ := claudeFinal(events); kind != "open" {
		t.Errorf("fresh legacy file: final %s, want open", kind)
	}
	old := time.Now().Add(-2 * codexLegacyQuiet)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	events, err = readFile(path, codexAgent(t))
	if err != nil {
		t.Fatal(err)
	}
	if kind, class, _ := claudeFinal(events); kind != "turn_failed" || class != "unknown" {
		t.Errorf("quiet legacy file: final %s %s, want turn_failed unknown", kind, class)
	}
}

func TestCodexSessionAndProject(t *testing.T) {
	events := codexReadSettled(t, filepath.Join(codexSamples, "api500.jsonl"))
	e := events[len(events)-1]
	if e.Session != "01a22baa-552b-7f92-a9e7-330eb3972fdb" || e.Project != "/home/dev/project" {
		t.Errorf("session %q project %q", e.Session, e.Project)
	}
	if want := time.Date(2026, 11, 30, 8, 55, 16, 398e6, time.UTC); !e.Time.Equal(want) {
		t.Errorf("time = %v, want %v", e.Time, want)
	}
	if e.Failure.Code != "internal_server_error" || !strings.HasPrefix(e.Failure.Message, "We’re currently") {
		t.Errorf("failure = %+v", e.Failure)
	}
	// Without session_meta the file name gives the session.
	r := newCodexRollout("/c/sessions/2026/11/30/rollout-2026-11-30T08-55-12-01a22baa-552b-7f92-a9e7-330eb3972fdb.jsonl", nil)
	got := r.Read([]byte(cxStarted))
	if len(got) != 1 || got[0].Session != "01a22baa-552b-7f92-a9e7-330eb3972fdb" {
		t.Errorf("session from the file name: %+v", got)
	}
}

// The TUI session: every person's message once, Codex's own user-role
// records never, and the turn endings in order.
func TestCodexTUISessionTurns(t *testing.T) {
	events := codexReadSettled(t, filepath.Join(codexSamples, "tui-session-full.jsonl"))
	var texts, endings []string
	for _, e := range events {
		switch e.Kind {
		case UserMessage:
			texts = append(texts, e.Text)
		case TurnDone:
			endings = append(endings, "done")
		case TurnFailed:
			endings = append(endings, string(e.Failure.Class))
		}
	}
	wantTexts := []string{
		"first message typed via tmux", "second message (will be interrupted)",
		"third message: run a command needing approval", "fourth message: slow stream, will press Esc",
		"fifth message: provider will fail with 500", "continue",
		"resumed headless via exec resume --remote (daemon)", "exec resume by id, provider fails", "exec resume --last: continue",
	}
	if strings.Join(texts, "|") != strings.Join(wantTexts, "|") {
		t.Errorf("user messages:\n got %q\nwant %q", texts, wantTexts)
	}
	wantEnds := "done cancelled done cancelled provider_error done done provider_error done"
	if got := strings.Join(endings, " "); got != wantEnds {
		t.Errorf("endings = %s, want %s", got, wantEnds)
	}
}

// The session captured from the real TUI while taking the screen samples:
// cancel, approval refused (Esc), 500, success.
func TestCodexCapturedTUISession(t *testing.T) {
	events := codexReadSettled(t, filepath.Join("testdata", "codex", "tui-screens-session.jsonl"))
	var endings []string
	users := 0
	for _, e := range events {
		switch e.Kind {
		case UserMessage:
			users++
		case TurnDone:
			endings = append(endings, "done")
		case TurnFailed:
			endings = append(endings, string(e.Failure.Class))
		}
	}
	if got := strings.Join(endings, " "); got != "cancelled cancelled provider_error done" || users != 4 {
		t.Errorf("endings = %s, users = %d", got, users)
	}
}

// Records in the shape of docs/agents/codex.md §3 (trimmed to the fields read).
const (
	cxMeta     = `{"timestamp":"2026-11-30T08:54:52.566Z","ordinal":0,"type":"session_meta","payload":{"id":"s1","cwd":"/home/dev/project","originator":"codex-tui","cli_version":"0.171.0"}}`
	cxStarted  = `{"timestamp":"2026-11-30T08:55:13.451Z","ordinal":1,"type":"event_msg","payload":{"type":"task_started","turn_id":"t1","turn_attribution":{"turn_trigger":"user"}}}`
	cxUserItem = `{"timestamp":"2026-11-30T08:55:13.756Z","ordinal":7,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}],"internal_chat_message_metadata_passthrough":{"turn_id":"t1","content_item_kinds":["user.text"],"content_item_metadata":[{"provenance":{"type":"user"}}]}}}`
	cxUserDone = `{"timestamp":"2026-11-30T08:55:13.757Z","ordinal":8,"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"UserMessage","id":"u1","content":[{"type":"text","text":"hello","text_elements":[]}]}}}`
	cxEnvCtx   = `{"timestamp":"2026-11-30T08:55:13.664Z","ordinal":3,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>"}],"internal_chat_message_metadata_passthrough":{"turn_id":"t1","content_item_kinds":["environments.environment_context"],"content_item_metadata":[{"provenance":{"type":"harness","hook":false}}]}}}`
	cxAborted  = `{"timestamp":"2026-11-30T08:56:46.825Z","ordinal":20,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<turn_aborted>\nThe user interrupted the previous turn on purpose."}],"internal_chat_message_metadata_passthrough":{"turn_id":"t1","content_item_kinds":["generic.turn_aborted"],"content_item_metadata":[{"provenance":{"type":"harness","hook":false}}]}}}`
	cxAbort    = `{"timestamp":"2026-11-30T08:56:46.826Z","ordinal":21,"type":"event_msg","payload":{"type":"turn_aborted","turn_id":"t1","reason":"interrupted"}}`
	cxOpened   = `{"timestamp":"2026-11-30T08:55:13.826Z","ordinal":9,"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":42.0,"window_minutes":300,"resets_at":1796032513}}}}`
	cxAnswer   = `{"timestamp":"2026-11-30T08:55:14.000Z","ordinal":10,"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"AgentMessage","id":"msg_0","content":[{"type":"Text","text":"Hello."}]}}}`
	cxUsage    = `{"timestamp":"2026-11-30T08:55:14.100Z","ordinal":11,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":110}},"rate_limits":null}}`
	cxComplete = `{"timestamp":"2026-11-30T08:55:14.200Z","ordinal":12,"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"Hello.","error":null}}`
	cxCall     = `{"timestamp":"2026-11-30T08:55:14.000Z","ordinal":10,"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_0"}}`
	cxCallOut  = `{"timestamp":"2026-11-30T08:55:20.000Z","ordinal":13,"type":"response_item","payload":{"type":"function_call_output","call_id":"call_0","output":"ok"}}`
)

// cxFailed is a task_complete carrying error; info is codex_error_info's JSON.
func cxFailed(message, info string) string {
	return `{"timestamp":"2026-11-30T08:55:16.398Z","ordinal":9,"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":null,"error":{"message":` +
		strings.ReplaceAll(quoteJSON(message), "\n", `\n`) + `,"codex_error_info":` + info + `}}}`
}

func quoteJSON(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func codexFeed(lines ...string) []Event {
	r := newCodexRollout("/c/sessions/2026/11/30/rollout-x.jsonl", nil)
	var out []Event
	for _, l := range lines {
		out = append(out, r.Read([]byte(l))...)
	}
	return out
}

func TestCodexPersonMessageOnce(t *testing.T) {
	events := codexFeed(cxMeta, cxStarted, cxEnvCtx, cxUserItem, cxUserDone, cxOpened, cxAnswer, cxUsage, cxComplete)
	claudeSameKinds(t, events, TurnStarted, UserMessage, AgentActivity, AgentActivity, AgentActivity, TurnDone)
	if e := events[1]; e.Text != "hello" || e.Session != "s1" || e.Project != "/home/dev/project" {
		t.Errorf("user_message = %+v", e)
	}
	// The same text in the next turn is a new message.
	second := strings.ReplaceAll(cxUserDone, `"t1"`, `"t2"`)
	claudeSameKinds(t, codexFeed(cxStarted, cxUserDone, strings.ReplaceAll(cxStarted, "t1", "t2"), second),
		TurnStarted, UserMessage, TurnStarted, UserMessage)
}

func TestCodexHarnessRecordsAreNotAPerson(t *testing.T) {
	claudeSameKinds(t, codexFeed(cxStarted, cxEnvCtx, cxAborted, cxAbort), TurnStarted, TurnFailed)
	developer := `{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions>"}]}}`
	noMeta := `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /p"}]}}`
	claudeSameKinds(t, codexFeed(developer, noMeta))
}

func TestCodexCancel(t *testing.T) {
	events := codexFeed(cxStarted, cxUserItem, cxAbort)
	claudeSameKinds(t, events, TurnStarted, UserMessage, TurnFailed)
	if f := events[2].Failure; f.Class != Cancelled || f.Code != "interrupted" {
		t.Errorf("failure = %+v", f)
	}
	for _, reason := range []string{"replaced", "review_ended"} {
		ev := codexFeed(strings.Replace(cxAbort, "interrupted", reason, 1))
		if len(ev) != 1 || ev[0].Failure.Class != Cancelled {
			t.Errorf("%s: %+v", reason, ev)
		}
	}
}

// Codex reconnecting by itself: a second stream opened with no output in
// between is a retry, never a dead turn; the turn then completes.
func TestCodexReconnectsAreNotADeadTurn(t *testing.T) {
	events := codexFeed(cxStarted, cxUserItem, cxOpened, cxOpened, cxOpened, cxAnswer, cxUsage, cxComplete)
	claudeSameKinds(t, events, TurnStarted, UserMessage, AgentActivity, AgentRetrying, AgentRetrying, AgentActivity, AgentActivity, TurnDone)
	// Output between two streams: a new request (a tool round), not a retry.
	claudeSameKinds(t, codexFeed(cxOpened, cxAnswer, cxOpened), AgentActivity, AgentActivity, AgentActivity)
	// The inturn sample never reads as failed.
	events = codexReadSettled(t, filepath.Join(codexSamples, "inturn-retry-then-ok.jsonl"))
	for _, e := range events {
		if e.Kind == TurnFailed {
			t.Errorf("dead turn in a recovered turn: %+v", e)
		}
	}
}

func TestCodexErrorClasses(t *testing.T) {
	cases := []struct {
		message, info string
		class         Class
		code          string
	}{
		{"We’re currently experiencing high demand, which may cause temporary errors.", `"internal_server_error"`, ProviderError, "internal_server_error"},
		{"unexpected status 503 Service Unavailable: x, url: http://127.0.0.1:18203/v1/responses, request id: req_1", `{"http_connection_failed":{"http_status_code":503}}`, ProviderError, "http_connection_failed/503"},
		{"stream disconnected before completion: stream closed before response.completed", `"other"`, ProviderError, "other"},
		{"exceeded retry limit, last status: 429 Too Many Requests, request id: req_1", `{"response_too_many_failed_attempts":{"http_status_code":429}}`, ProviderError, "response_too_many_failed_attempts/429"},
		{"error sending request", `{"http_connection_failed":{"http_status_code":null}}`, ProviderError, "http_connection_failed"},
		{"Selected model is at capacity. Please try a different model.", `"server_overloaded"`, ProviderError, "server_overloaded"},
		{"x", `"responseStreamDisconnected"`, ProviderError, "response_stream_disconnected"},
		{"You’ve hit your usage limit. Upgrade to Pro, or try again at 9:55 AM.", `"usage_limit_exceeded"`, UsageLimit, "usage_limit_exceeded"},
		{"Quota exceeded. Check your plan and billing details.", `"usage_limit_exceeded"`, UsageLimit, "usage_limit_exceeded"},
		{"You've hit your usage limit.", `"other"`, UsageLimit, "other"},
		{"unexpected status 401 Unauthorized: Incorrect API key provided", `{"http_connection_failed":{"http_status_code":401}}`, Auth, "http_connection_failed/401"},
		{"Your access token could not be refreshed because your refresh token has expired.", `"unauthorized"`, Auth, "unauthorized"},
		{"unexpected status 403 Forbidden", `{"http_connection_failed":{"http_status_code":403}}`, Auth, "http_connection_failed/403"},
		{"Codex ran out of room in the model's context window.", `"context_window_exceeded"`, Rejected, "context_window_exceeded"},
		{"unexpected status 400 Bad Request", `{"http_connection_failed":{"http_status_code":400}}`, Rejected, "http_connection_failed/400"},
		{"x", `"modelNotFound"`, Rejected, "model_not_found"},
		{"sandbox denied", `"sandbox_error"`, Unknown, "sandbox_error"},
		{"something else broke", `"other"`, Unknown, "other"},
		// A name no table row knows says nothing; a 5xx in the text does.
		{"unexpected status 500", `"some_new_name"`, ProviderError, "some_new_name"},
		{"unexpected status 500", `null`, ProviderError, ""},
		{"x", `{"a":1,"b":2}`, Unknown, ""},
	}
	for _, c := range cases {
		events := codexFeed(cxStarted, cxFailed(c.message, c.info))
		if len(events) != 2 || events[1].Kind != TurnFailed {
			t.Errorf("%s: events %+v", c.info, events)
			continue
		}
		f := events[1].Failure
		if f.Class != c.class || f.Code != c.code || f.Message != c.message {
			t.Errorf("%s %q: got %s %q, want %s %q", c.info, c.message, f.Class, f.Code, c.class, c.code)
		}
		if (f.Class == Auth) != (f.Hint == codexLoginHint) {
			t.Errorf("%s: hint %q", c.info, f.Hint)
		}
	}
}

func TestCodexUsageLimitReset(t *testing.T) {
	limitMsg := "You’ve hit your usage limit. Upgrade to Pro, or try again at 9:55 AM."
	full := func(window string) string {
		return `{"timestamp":"2026-11-30T08:55:13.826Z","ordinal":9,"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{` + window + `}}}`
	}
	cases := []struct {
		name   string
		window string
		want   time.Time
	}{
		{"resets_at", `"primary":{"used_percent":100.0,"resets_at":1796032513},"secondary":{"used_percent":12.0,"resets_at":1796288113}`, time.Unix(1796032513, 0)},
		{"both full: the later", `"primary":{"used_percent":100.0,"resets_at":1796032513},"secondary":{"used_percent":100.0,"resets_at":1796288113}`, time.Unix(1796288113, 0)},
		{"resets_in_seconds from the record time", `"primary":{"used_percent":100.0,"resets_in_seconds":3600}`, time.Date(2026, 11, 30, 9, 55, 13, 0, time.UTC)},
	}
	for _, c := range cases {
		events := codexFeed(cxStarted, full(c.window), cxFailed(limitMsg, `"usage_limit_exceeded"`))
		f := events[len(events)-1].Failure
		if f.Class != UsageLimit || !f.ResetAt.Equal(c.want) {
			t.Errorf("%s: %s reset %v, want %v", c.name, f.Class, f.ResetAt, c.want)
		}
	}
	// A new turn forgets the previous turn's full window.
	events := codexFeed(full(`"primary":{"used_percent":100.0,"resets_at":1796032513}`), cxStarted, cxFailed("Quota exceeded.", `"usage_limit_exceeded"`))
	if f := events[len(events)-1].Failure; !f.ResetAt.IsZero() {
		t.Errorf("reset from an earlier turn: %v", f.ResetAt)
	}
}

func TestCodexTextReset(t *testing.T) {
	ts := time.Date(2026, 11, 30, 8, 55, 13, 0, time.UTC)
	warsaw, err := time.LoadLocation("Europe/Warsaw")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		msg  string
		loc  *time.Location
		want time.Time
	}{
		{"… or try again at 9:55 AM.", time.UTC, time.Date(2026, 11, 30, 9, 55, 0, 0, time.UTC)},
		{"… or try again at 8:30 AM.", time.UTC, time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC)},
		{"… or try again at 10:55 AM.", warsaw, time.Date(2026, 11, 30, 9, 55, 0, 0, time.UTC)},
		{"… or try again at Dec 2nd, 2026 1:05 PM.", time.UTC, time.Date(2026, 12, 2, 13, 5, 0, 0, time.UTC)},
		{"… or try again at 13:05 PM.", time.UTC, time.Time{}},
		{"… later.", time.UTC, time.Time{}},
	}
	defer func(z *time.Location) { wallClockZone = z }(wallClockZone)
	for _, c := range cases {
		wallClockZone = c.loc
		if got, _ := readReset(c.msg, ts); !got.Equal(c.want) {
			t.Errorf("%q: %v, want %v", c.msg, got, c.want)
		}
	}
	// Without a rate-limit snapshot the message decides.
	events := codexFeed(cxStarted, cxFailed("You’ve hit your usage limit. Try again at Dec 2nd, 2026 1:05 PM.", `"usage_limit_exceeded"`))
	if f := events[1].Failure; f.ResetAt.IsZero() {
		t.Errorf("no reset from the text: %+v", f)
	}
}

// A pending tool call is a box or a running tool: the turn stays open, and
// a legacy file with one is never judged dead from silence.
func TestCodexPendingCall(t *testing.T) {
	events := codexFeed(cxStarted, cxUserItem, cxCall)
	if kind, _, _ := claudeFinal(events); kind != "open" {
		t.Errorf("final %s, want open", kind)
	}
	legacyUser := `{"timestamp":"2026-11-30T08:59:11.610Z","type":"event_msg","payload":{"type":"user_message","message":"hello"}}`
	legacyCall := strings.Replace(cxCall, `"ordinal":10,`, "", 1)
	legacyOut := strings.Replace(cxCallOut, `"ordinal":13,`, "", 1)
	r := newCodexRollout("rollout-x.jsonl", nil)
	for _, l := range []string{legacyUser, legacyCall} {
		r.Read([]byte(l))
	}
	if ev := r.Settle(time.Hour); ev != nil {
		t.Errorf("settled with a pending call: %+v", ev)
	}
	r.Read([]byte(legacyOut))
	if ev := r.Settle(codexLegacyQuiet - time.Second); ev != nil {
		t.Errorf("settled before the quiet time: %+v", ev)
	}
	ev := r.Settle(codexLegacyQuiet)
	if len(ev) != 1 || ev[0].Kind != TurnFailed || ev[0].Failure.Class != Unknown || ev[0].Time.IsZero() {
		t.Fatalf("settle = %+v", ev)
	}
	if again := r.Settle(time.Hour); again != nil {
		t.Errorf("settled twice: %+v", again)
	}
	// A modern file is never judged from silence.
	m := newCodexRollout("rollout-x.jsonl", nil)
	for _, l := range []string{cxStarted, cxUserItem} {
		m.Read([]byte(l))
	}
	if ev := m.Settle(time.Hour); ev != nil {
		t.Errorf("modern file settled: %+v", ev)
	}
}

func TestCodexLegacyRetriesAndLimit(t *testing.T) {
	legacyUser := `{"timestamp":"2026-11-30T08:59:11.610Z","type":"event_msg","payload":{"type":"user_message","message":"hello"}}`
	ctx := `{"timestamp":"2026-11-30T08:59:11.620Z","type":"turn_context","payload":{"cwd":"/p"}}`
	limit := `{"timestamp":"2026-11-30T08:59:11.700Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":100.0,"window_minutes":300,"resets_at":1796032751}}}}`
	r := newCodexRollout("rollout-x.jsonl", nil)
	var events []Event
	for _, l := range []string{legacyUser, ctx, ctx, ctx, limit} {
		events = append(events, r.Read([]byte(l))...)
	}
	claudeSameKinds(t, events, UserMessage, TurnStarted, AgentRetrying, AgentRetrying, AgentActivity)
	ev := r.Settle(time.Hour)
	if len(ev) != 1 || ev[0].Failure.Class != UsageLimit || !ev[0].Failure.ResetAt.Equal(time.Unix(1796032751, 0)) {
		t.Errorf("settle = %+v", ev)
	}
}

func TestCodexRecognize(t *testing.T) {
	codex := codexAgent(t)
	for _, name := range []string{"success.jsonl", "old-0.98.0-success.jsonl"} {
		head, err := os.ReadFile(filepath.Join(codexSamples, name))
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := Recognize("/elsewhere/"+name, head[:min(len(head), 4096)]); !ok || a.Name != "codex" {
			t.Errorf("%s by content: %v %v", name, a.Name, ok)
		}
	}
	if a, ok := Recognize("/h/.codex/sessions/2026/11/30/rollout-2026-11-30T08-55-12-01a22baa-552b-7f92-a9e7-330eb3972fdb.jsonl", nil); !ok || a.Name != "codex" {
		t.Errorf("by place: %v %v", a.Name, ok)
	}
	claudeHead := []byte(`{"type":"user","sessionId":"s","isSidechain":false}`)
	if codex.Recognize("/x/s.jsonl", claudeHead) {
		t.Error("a Claude transcript read as Codex")
	}
	if codex.Title != "Codex CLI" || codex.LoginHint == "" || codex.Blind == "" || codex.ScreenReady == nil || len(codex.Executables) == 0 {
		t.Errorf("agent = %+v", codex)
	}
}
