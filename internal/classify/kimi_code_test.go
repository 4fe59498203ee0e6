package classify

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kimiSamples is the folder of real Kimi Code 2.1.0 homes (internal/classify/testdata/samples/kimi).
var kimiSamples = filepath.Join("testdata", "samples", "kimi")

func kimiAgent(t testing.TB, name string) Agent {
	t.Helper()
	a, ok := Lookup(name)
	if !ok {
		t.Fatalf("agent %s is not registered", name)
	}
	return a
}

// kimiSampleWire resolves an EXPECTED.tsv path: a snapshot file, or a
// scenario folder holding one kimi_home/sessions/*/*/agents/main/wire.jsonl.
func kimiSampleWire(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(kimiSamples, rel)
	if strings.HasSuffix(p, ".jsonl") {
		return p
	}
	files, _ := filepath.Glob(filepath.Join(p, "kimi_home", "sessions", "*", "*", "agents", "main", "wire.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%s: %d wire files, want 1", rel, len(files))
	}
	return files[0]
}

// kimiTSV reads a samples table, without its header line.
func kimiTSV(t *testing.T, name string, cols int) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(kimiSamples, name))
	if err != nil {
		t.Fatalf("the Kimi samples are part of the contract: %v", err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		c := strings.Split(sc.Text(), "\t")
		if first || len(c) != cols {
			continue
		}
		rows = append(rows, c)
	}
	return rows
}

// kimiTurn is one turn's outcome in EXPECTED_TURNS.tsv terms.
type kimiTurn struct{ kind, class string }

// kimiTurns splits events at each turn_started and names each turn's last
// ending ("open" when none).
func kimiTurns(events []Event) []kimiTurn {
	var turns []kimiTurn
	for _, e := range events {
		switch {
		case e.Kind == TurnStarted:
			turns = append(turns, kimiTurn{"open", "-"})
		case len(turns) == 0:
		case e.Kind == TurnDone:
			turns[len(turns)-1] = kimiTurn{string(TurnDone), "-"}
		case e.Kind == TurnFailed:
			turns[len(turns)-1] = kimiTurn{string(TurnFailed), string(e.Failure.Class)}
		}
	}
	return turns
}

func kimiLogEvents(t *testing.T, events []Event) {
	t.Helper()
	for _, e := range events {
		line, _ := e.MarshalLine()
		t.Logf("%s", line)
	}
}

func TestKimiCodeGoldenSamples(t *testing.T) {
	agent := kimiAgent(t, "kimi_code")
	rows := kimiTSV(t, "EXPECTED.tsv", 4)
	for _, row := range rows {
		t.Run(row[0], func(t *testing.T) {
			events, err := readFile(kimiSampleWire(t, row[0]), agent)
			if err != nil {
				t.Fatal(err)
			}
			kind, class := "-", "-"
			if turns := kimiTurns(events); len(turns) > 0 {
				kind, class = turns[len(turns)-1].kind, turns[len(turns)-1].class
			}
			var resetAt string = "-"
			for _, e := range events {
				if e.Failure != nil && !e.Failure.ResetAt.IsZero() {
					resetAt = e.Failure.ResetAt.String()
				}
			}
			if kind != row[1] || class != row[2] || resetAt != row[3] {
				kimiLogEvents(t, events)
				t.Errorf("got %s %s %s, want %s %s %s", kind, class, resetAt, row[1], row[2], row[3])
			}
		})
	}
	if len(rows) != 20 {
		t.Errorf("EXPECTED.tsv rows = %d, want 20", len(rows))
	}
}

func TestKimiCodeGoldenTurns(t *testing.T) {
	agent := kimiAgent(t, "kimi_code")
	want := map[string][]kimiTurn{}
	var order []string
	for _, row := range kimiTSV(t, "EXPECTED_TURNS.tsv", 5) {
		if _, seen := want[row[0]]; !seen {
			order = append(order, row[0])
		}
		want[row[0]] = append(want[row[0]], kimiTurn{row[2], row[3]})
		if row[4] != "-" {
			t.Errorf("%s turn %s: reset_at %q; Kimi records none", row[0], row[1], row[4])
		}
	}
	if len(order) != 18 {
		t.Errorf("EXPECTED_TURNS.tsv scenarios = %d, want 18", len(order))
	}
	for _, scenario := range order {
		t.Run(scenario, func(t *testing.T) {
			events, err := readFile(kimiSampleWire(t, scenario), agent)
			if err != nil {
				t.Fatal(err)
			}
			got := kimiTurns(events)
			if len(got) != len(want[scenario]) {
				kimiLogEvents(t, events)
				t.Fatalf("%d turns %v, want %d %v", len(got), got, len(want[scenario]), want[scenario])
			}
			for i := range got {
				if got[i] != want[scenario][i] {
					t.Errorf("turn #%d = %v, want %v", i, got[i], want[scenario][i])
				}
			}
		})
	}
}

func TestKimiCodeSessionProjectAndText(t *testing.T) {
	events, err := readFile(kimiSampleWire(t, "e500"), kimiAgent(t, "kimi_code"))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		t.Fatal("no events")
	}
	e := events[0]
	if e.Agent != "kimi_code" || !strings.HasPrefix(e.Session, "session_") || e.Project != "/home/dev/project/e500" {
		t.Errorf("first event %+v", e)
	}
	if e.Kind != UserMessage || e.Text != "hello" || events[1].Kind != TurnStarted {
		t.Errorf("first events %+v %+v", e, events[1])
	}
	var failed *Event
	retries := 0
	for i := range events {
		switch events[i].Kind {
		case TurnFailed:
			if failed == nil {
				failed = &events[i]
			}
		case AgentRetrying:
			if failed == nil {
				retries++
			}
		}
	}
	if retries != 2 {
		t.Errorf("retrying events before the first failure = %d, want 2 (docs/agents/kimi.md A2 sample)", retries)
	}
	f := failed.Failure
	if f.Class != ProviderError || f.Code != "provider.api_error/500" ||
		f.Message != "500 fake internal server error (request req-fake-1796029274881)" {
		t.Errorf("failure %+v", f)
	}
	if got := failed.Time.UnixMilli(); got != 1796029274901 {
		t.Errorf("failure time %d, want the canonical record's 1796029274901", got)
	}
}

// Records in the shape of docs/agents/kimi.md A2 (trimmed to the fields read).
const (
	kcPrompt  = `{"type":"turn.prompt","agentId":"main","input":[{"type":"text","text":"hello"}],"origin":{"kind":"user"},"promptId":"p0","turnId":0,"time":1796029273060}`
	kcRequest = `{"type":"llm.request","agentId":"main","kind":"loop","provider":"openai","model":"fake-model","turnStep":"0.1","time":1796029273114}`
	kcRetry   = `{"type":"turn.step.retrying","agentId":"main","turnId":0,"step":1,"failedAttempt":1,"nextAttempt":2,"maxAttempts":3,"delayMs":556.3,"errorName":"APIStatusError","errorMessage":"500 fake internal server error","statusCode":500,"time":1796029273235}`
	kcStepInt = `{"type":"turn.step.interrupted","agentId":"main","turnId":0,"step":3,"reason":"error","message":"[provider.api_error] 500 fake internal server error","time":1796029274900}`
	kcMirror  = `{"turnId":0,"outcome":"failed","errorMessage":"[object Object]","type":"agent.turn.ended","time":1796029274891,"kind":"event"}`
	kcDone    = `{"type":"turn.ended","agentId":"main","turnId":0,"reason":"completed","durationMs":536,"time":1796029284861}`
	kcBox     = `{"type":"interaction.request","agentId":"main","id":"approval_1","kind":"approval","toolCallId":"call_fake_1","request":{"id":"approval_1","turnId":0,"toolName":"Bash"},"time":1796029522082}`
	kcBoxDone = `{"type":"interaction.resolved","agentId":"main","id":"approval_1","response":{"decision":"approved"},"time":1796029529574}`
)

// kcEnded builds a failed turn.ended with the given error object.
func kcEnded(errorJSON string) string {
	return `{"type":"turn.ended","agentId":"main","turnId":0,"reason":"failed","error":` + errorJSON + `,"durationMs":95,"time":1796029274901}`
}

func kimiCodeFeed(lines ...string) []Event {
	r := newKimiCodeWire(filepath.Join("home", ".kimi-code", "sessions", "wd_p_000000000000", "session_s1", "agents", "main", "wire.jsonl"), nil)
	var out []Event
	for _, l := range lines {
		out = append(out, r.Read([]byte(l))...)
	}
	return out
}

func TestKimiCodeClassTable(t *testing.T) {
	for _, tc := range []struct {
		name, err string
		class     Class
	}{
		{"quota", `{"code":"provider.api_error","message":"429 … insufficient balance …","name":"APIProviderQuotaExhaustedError","details":{"statusCode":429},"retryable":false}`, UsageLimit},
		{"402", `{"code":"provider.api_error","message":"402","name":"APIStatusError","details":{"statusCode":402}}`, UsageLimit},
		{"401", `{"code":"provider.auth_error","message":"401 Invalid Authentication","name":"APIStatusError","details":{"statusCode":401},"retryable":false}`, Auth},
		{"auth code", `{"code":"auth.expired","message":"login expired"}`, Auth},
		{"rate limit", `{"code":"provider.rate_limit","message":"429 max RPM","name":"APIProviderRateLimitError","details":{"statusCode":429},"retryable":true}`, ProviderError},
		{"overloaded 529", `{"code":"provider.overloaded","message":"529 Overloaded","name":"APIProviderOverloadedError","details":{"statusCode":529}}`, ProviderError},
		{"connection", `{"code":"provider.connection_error","message":"Connection error.","name":"APIConnectionError","retryable":true}`, ProviderError},
		// retryable:false on a 500 must not matter (docs/agents/kimi.md A3).
		{"500 not retryable", `{"code":"provider.api_error","message":"500 x","name":"APIStatusError","details":{"statusCode":500},"retryable":false}`, ProviderError},
		{"408", `{"code":"provider.api_error","message":"408","details":{"statusCode":408}}`, ProviderError},
		{"400", `{"code":"provider.api_error","message":"400 bad","details":{"statusCode":400}}`, Rejected},
		{"404", `{"code":"provider.api_error","message":"404","details":{"statusCode":404}}`, Rejected},
		{"overflow", `{"code":"context.overflow","message":"too long"}`, Rejected},
		{"filtered", `{"code":"provider.filtered","message":"filtered"}`, Rejected},
		{"max steps", `{"code":"loop.max_steps_exceeded","message":"Turn exceeded maxSteps=1.","name":"LoopError","details":{"maxSteps":1},"retryable":false}`, Unknown},
		// retryable:true on an unknown code must not make it a provider error.
		{"unknown retryable", `{"code":"internal","message":"boom","retryable":true}`, Unknown},
		{"api_error without status", `{"code":"provider.api_error","message":"?"}`, Unknown},
		{"no error object", `null`, Unknown},
	} {
		events := kimiCodeFeed(kcPrompt, kcEnded(tc.err))
		if len(events) != 3 || events[2].Kind != TurnFailed {
			t.Errorf("%s: events %+v", tc.name, events)
			continue
		}
		f := events[2].Failure
		if f.Class != tc.class {
			t.Errorf("%s: class %s, want %s", tc.name, f.Class, tc.class)
		}
		if (f.Class == Auth) != (f.Hint == kimiCodeLoginHint) {
			t.Errorf("%s: hint %q", tc.name, f.Hint)
		}
		if !f.ResetAt.IsZero() {
			t.Errorf("%s: a reset time %v; Kimi records none", tc.name, f.ResetAt)
		}
	}
}

func TestKimiCodeEvents(t *testing.T) {
	t.Run("own retries are not a dead turn", func(t *testing.T) {
		claudeSameKinds(t, kimiCodeFeed(kcPrompt, kcRequest, kcRetry, kcRequest, kcDone),
			UserMessage, TurnStarted, AgentActivity, AgentRetrying, AgentActivity, TurnDone)
	})
	t.Run("only the canonical turn.ended decides", func(t *testing.T) {
		claudeSameKinds(t, kimiCodeFeed(kcPrompt, kcStepInt, kcMirror), UserMessage, TurnStarted)
	})
	t.Run("cancel", func(t *testing.T) {
		cancel := `{"type":"turn.cancel","agentId":"main","turnId":0,"target":"active","reason":"user_cancelled","time":1796029430910}`
		ended := `{"type":"turn.ended","agentId":"main","turnId":0,"reason":"cancelled","durationMs":900,"time":1796029431080}`
		events := kimiCodeFeed(kcPrompt, cancel, ended)
		claudeSameKinds(t, events, UserMessage, TurnStarted, TurnFailed)
		if f := events[2].Failure; f.Class != Cancelled {
			t.Errorf("failure %+v", f)
		}
	})
	t.Run("box opened and closed", func(t *testing.T) {
		events := kimiCodeFeed(kcPrompt, kcBox, kcBoxDone, kcDone)
		claudeSameKinds(t, events, UserMessage, TurnStarted, BoxOpened, BoxClosed, TurnDone)
		if events[2].Box != "approval_1" || events[3].Box != "approval_1" {
			t.Errorf("boxes %q %q", events[2].Box, events[3].Box)
		}
		// A box never outlives its turn.
		claudeSameKinds(t, kimiCodeFeed(kcPrompt, kcBox, kcDone), UserMessage, TurnStarted, BoxOpened, BoxClosed, TurnDone)
	})
	t.Run("a second open box keeps the agent waiting", func(t *testing.T) {
		box2 := strings.ReplaceAll(kcBox, "approval_1", "approval_2")
		box2Done := strings.ReplaceAll(kcBoxDone, "approval_1", "approval_2")
		// Answering one of two boxes closes nothing: the agent still waits.
		claudeSameKinds(t, kimiCodeFeed(kcPrompt, kcBox, box2, kcBoxDone), UserMessage, TurnStarted, BoxOpened, BoxOpened)
		claudeSameKinds(t, kimiCodeFeed(kcPrompt, kcBox, box2, kcBoxDone, box2Done), UserMessage, TurnStarted, BoxOpened, BoxOpened, BoxClosed)
	})
	t.Run("steer is the person", func(t *testing.T) {
		steered := `{"type":"prompt.steered","agentId":"main","activePromptId":"p0","messageId":"m1","content":[{"type":"text","text":"also this"}],"time":1796029573744}`
		steer := `{"type":"turn.steer","agentId":"main","input":[{"type":"text","text":"also this"}],"origin":{"kind":"user","inTurn":true},"messageId":"m1","turnId":0,"time":1796029626395}`
		events := kimiCodeFeed(kcPrompt, steered, steer)
		claudeSameKinds(t, events, UserMessage, TurnStarted, UserMessage, UserMessage)
		if events[2].Text != "also this" || events[3].Text != "also this" {
			t.Errorf("steer texts %q %q", events[2].Text, events[3].Text)
		}
	})
	t.Run("a prompt not from the person starts a turn only", func(t *testing.T) {
		other := strings.Replace(kcPrompt, `"origin":{"kind":"user"}`, `"origin":{"kind":"system"}`, 1)
		claudeSameKinds(t, kimiCodeFeed(other), TurnStarted)
	})
	t.Run("injected context is not the person", func(t *testing.T) {
		inj := `{"type":"context.append_message","agentId":"main","message":{"role":"user","origin":{"kind":"injection"}},"time":1796029431090}`
		claudeSameKinds(t, kimiCodeFeed(inj))
	})
	t.Run("a prompt a hook blocked", func(t *testing.T) {
		blocked := `{"type":"prompt.completed","agentId":"main","promptId":"p9","reason":"blocked","time":1796029653700}`
		claudeSameKinds(t, kimiCodeFeed(blocked), UserMessage)
		claudeSameKinds(t, kimiCodeFeed(strings.Replace(kcPrompt, `"p0"`, `"p9"`, 1), blocked), UserMessage, TurnStarted)
	})
	t.Run("session from the folder", func(t *testing.T) {
		if e := kimiCodeFeed(kcPrompt)[0]; e.Session != "session_s1" || e.Agent != "kimi_code" {
			t.Errorf("event %+v", e)
		}
	})
}

func TestKimiCodeMalformedRecords(t *testing.T) {
	for _, line := range []string{
		``, `{`, `not json`, `[]`, `null`, `{"type":"turn.ended"`, kcPrompt[:40], kcEnded(`{"code":5}`)[:60],
		`{"type":"turn.ended","reason":5,"time":"x"}`, `{"type":"metadata","protocol_version":"1.5","created_at":1796029272987}`,
	} {
		for _, e := range kimiCodeFeed(line) {
			if e.Kind == TurnDone {
				t.Errorf("%q gave %+v", line, e)
			}
		}
	}
	// A field of the wrong type does not hide the ending.
	events := kimiCodeFeed(`{"type":"turn.ended","reason":"failed","durationMs":"x","error":{"code":"provider.overloaded","message":"503"},"time":1796029274901}`)
	if len(events) != 1 || events[0].Kind != TurnFailed || events[0].Failure.Class != ProviderError {
		t.Errorf("events %+v", events)
	}
}

func TestKimiRecognize(t *testing.T) {
	code, _ := os.ReadFile(kimiSampleWire(t, "ok"))
	legacy, _ := os.ReadFile(filepath.Join(kimiLegacySamples, "recent-protocol-1.10", "wire.jsonl"))
	for _, tc := range []struct {
		path string
		head []byte
		want string
	}{
		{"/h/.kimi-code/sessions/wd_x_1/session_1/agents/main/wire.jsonl", nil, "kimi_code"},
		{"/tmp/copy.jsonl", code[:200], "kimi_code"},
		{"/h/.kimi/logs/kimi.log", nil, "kimi"},
		{"/tmp/other.jsonl", legacy[:200], "kimi"},
	} {
		a, ok := Recognize(tc.path, tc.head)
		if !ok || a.Name != tc.want {
			t.Errorf("%s: got %q %v, want %s", tc.path, a.Name, ok, tc.want)
		}
	}
}
