package classify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// museSamples is the folder of MSP frame logs (internal/classify/testdata/samples/muse).
var museSamples = filepath.Join("testdata", "samples", "muse")

func museAgent(t testing.TB) Agent {
	t.Helper()
	a, ok := Lookup(museName)
	if !ok {
		t.Fatal("agent muse is not registered")
	}
	return a
}

// turnEndings lists every turn ending of a file in order: "turn_done" or
// "turn_failed/<class>".
func turnEndings(events []Event) string {
	var out []string
	for _, e := range events {
		switch e.Kind {
		case TurnDone:
			out = append(out, string(TurnDone))
		case TurnFailed:
			out = append(out, string(TurnFailed)+"/"+string(e.Failure.Class))
		}
	}
	return strings.Join(out, " ")
}

// The samples have no EXPECTED.tsv (docs/agents/README.md); the expectations
// below are read from their frames.
var museGolden = []struct {
	file    string
	endings string // every turn ending, in order
	final   string // claudeFinal's kind/class of the last turn
	why     string
}{
	{"provider-failure-turn.transcript.ndjson", "turn_failed/provider_error turn_done", "turn_done/-",
		`turn/completed terminal:"failed", error.kind "modelError", retryable:true ("model failed after 3 attempts: provider returned 503") → provider_error; the client's "try again" turn then ends terminal:"completed"`},
	{"turn-retry-scheduled.transcript.ndjson", "turn_done", "turn_done/-",
		`turn/retryScheduled is non-terminal (agent_retrying); the same turn ends terminal:"completed"`},
	{"approval-round-trip.transcript.ndjson", "turn_done", "turn_done/-",
		`approval/requested + approval/request open one box, approval/resolved closes it, turn/completed terminal:"completed"`},
	{"auth-required.third-party.transcript.ndjson", "turn_failed/auth", "turn_failed/auth",
		`turn/completed terminal:"failed", error.kind "authRequired" → auth, never retried`},
}

func TestMuseGoldenSamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(museSamples, "*.ndjson"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the Muse samples are part of the contract: %v", err)
	}
	if len(files) != len(museGolden) {
		t.Errorf("%d samples, %d expectations: every sample needs a row", len(files), len(museGolden))
	}
	agent := museAgent(t)
	for _, g := range museGolden {
		t.Run(g.file, func(t *testing.T) {
			events, err := readFile(filepath.Join(museSamples, g.file), agent)
			if err != nil {
				t.Fatal(err)
			}
			kind, class, _ := claudeFinal(events)
			if got := turnEndings(events); got != g.endings || kind+"/"+class != g.final {
				for _, e := range events {
					line, _ := e.MarshalLine()
					t.Logf("%s", line)
				}
				t.Errorf("endings %q, final %s/%s; want %q, %s (%s)", got, kind, class, g.endings, g.final, g.why)
			}
			for _, e := range events {
				if e.Agent != museName || e.Session == "" {
					t.Errorf("event without agent or session: %+v", e)
				}
			}
		})
	}
}

func TestMuseSampleDetails(t *testing.T) {
	agent := museAgent(t)
	read := func(name string) []Event {
		t.Helper()
		events, err := readFile(filepath.Join(museSamples, name), agent)
		if err != nil {
			t.Fatal(err)
		}
		return events
	}

	t.Run("provider failure keeps the error and the recovery turn", func(t *testing.T) {
		events := read("provider-failure-turn.transcript.ndjson")
		claudeSameKinds(t, events,
			UserMessage, TurnStarted, AgentActivity, AgentActivity, AgentActivity, TurnFailed,
			UserMessage, TurnStarted, AgentActivity, TurnDone)
		f := events[5].Failure
		if f.Code != "modelError" || !strings.Contains(f.Message, "503 service_unavailable") {
			t.Errorf("failure = %+v", f)
		}
		if events[0].Text != "summarize the failing tests" || events[6].Text != "try again" {
			t.Errorf("messages = %q, %q", events[0].Text, events[6].Text)
		}
		if want := time.UnixMilli(1754592400000).UTC(); !events[5].Time.Equal(want) {
			t.Errorf("time = %v, want %v (emittedAtMs)", events[5].Time, want)
		}
		if events[5].Session != "018f7294-0000-7000-8000-5f0e73500000" {
			t.Errorf("session = %q", events[5].Session)
		}
	})
	t.Run("in-turn retry is not an ending", func(t *testing.T) {
		events := read("turn-retry-scheduled.transcript.ndjson")
		claudeSameKinds(t, events,
			UserMessage, TurnStarted, AgentRetrying, AgentActivity, AgentActivity, AgentActivity, AgentActivity, TurnDone)
		if events[0].Project != "/home/me/src/proj" {
			t.Errorf("project = %q, want the session's workspaceRoot", events[0].Project)
		}
	})
	t.Run("approval twin opens one box", func(t *testing.T) {
		events := read("approval-round-trip.transcript.ndjson")
		claudeSameKinds(t, events,
			UserMessage, TurnStarted, AgentActivity, BoxOpened, BoxClosed, AgentActivity, TurnDone)
		if events[3].Box != museApprovalBox {
			t.Errorf("box = %q", events[3].Box)
		}
	})
	t.Run("auth carries the login hint", func(t *testing.T) {
		events := read("auth-required.third-party.transcript.ndjson")
		f := events[0].Failure
		if f.Hint != museLoginHint || f.Message != "run muse login" || f.Code != "authRequired" {
			t.Errorf("failure = %+v", f)
		}
	})
}

// museLog wraps frames as frame-log lines: "c " frames are the client's,
// the rest the server's.
func museLog(frames ...string) [][]byte {
	var out [][]byte
	for _, f := range frames {
		dir := "server"
		if rest, ok := strings.CutPrefix(f, "c "); ok {
			dir, f = "client", rest
		}
		line, err := json.Marshal(museLine{Dir: dir, Raw: f})
		if err != nil {
			panic(err)
		}
		out = append(out, line)
	}
	return out
}

func museFeed(frames ...string) []Event {
	r := newMuseReader(filepath.Join("home", ".muse", "nudge", "frames", "conn-1.ndjson"))
	var out []Event
	for _, l := range museLog(frames...) {
		out = append(out, r.Read(l)...)
	}
	return out
}

// Frames constructed from msp.d.ts shapes (docs/agents/muse.md A2).
const (
	msStarted  = `{"jsonrpc":"2.0","method":"turn/started","params":{"sessionId":"s1","turnId":"t1","commandId":"t1","viewCursor":"v:1"},"emittedAtMs":1754600000000}`
	msUsageHit = `{"jsonrpc":"2.0","method":"usage/changed","params":{"observedAtMs":1754600000000,"tier":"pro","window":{"usedPercent":100,"resetsAtMs":1754610000000,"windowDurationMins":300},"weekly":{"usedPercent":62,"resetsAtMs":1755000000000}}}`
)

func msFailed(errJSON string) string {
	return `{"jsonrpc":"2.0","method":"turn/completed","params":{"sessionId":"s1","turnId":"t1","terminal":"failed","viewCursor":"v:9","error":` + errJSON + `},"emittedAtMs":1754600005000}`
}

func TestMuseClassification(t *testing.T) {
	cases := []struct {
		name      string
		completed string
		class     Class
		code      string
	}{
		{"retryable model error", msFailed(`{"kind":"modelError","message":"provider returned 529 overloaded","retryable":true}`), ProviderError, "modelError"},
		{"quota wording", msFailed(`{"kind":"modelError","message":"monthly quota exhausted","retryable":true}`), UsageLimit, "modelError"},
		{"invalid request", msFailed(`{"kind":"modelError","message":"provider returned 400 invalid_request: prompt is too long","retryable":false}`), Rejected, "modelError"},
		{"other model error", msFailed(`{"kind":"modelError","message":"model produced no output","retryable":false}`), Unknown, "modelError"},
		{"step limit", msFailed(`{"kind":"stepLimit","message":"step limit reached","retryable":true}`), Unknown, "stepLimit"},
		{"kind from the future", msFailed(`{"kind":"solarFlare","message":"?","retryable":true}`), Unknown, "solarFlare"},
		{"auth", msFailed(`{"kind":"authRequired","message":"run muse login","retryable":false}`), Auth, "authRequired"},
		{"host died mid-turn", `{"jsonrpc":"2.0","method":"turn/completed","params":{"sessionId":"s1","turnId":"t1","terminal":"failed","reason":"crash_inferred"}}`, Unknown, "failed"},
		{"cancelled", `{"jsonrpc":"2.0","method":"turn/completed","params":{"sessionId":"s1","turnId":"t1","terminal":"cancelled"}}`, Cancelled, "cancelled"},
		{"terminal from the future", `{"jsonrpc":"2.0","method":"turn/completed","params":{"sessionId":"s1","turnId":"t1","terminal":"evaporated"}}`, Unknown, "terminal/evaporated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			events := museFeed(msStarted, c.completed)
			claudeSameKinds(t, events, TurnStarted, TurnFailed)
			if len(events) != 2 {
				return
			}
			f := events[1].Failure
			if f.Class != c.class || f.Code != c.code {
				t.Errorf("failure = %+v, want class %s code %s", f, c.class, c.code)
			}
		})
	}
	t.Run("crash says Muse stopped", func(t *testing.T) {
		events := museFeed(cases[7].completed)
		if got := events[0].Failure.Message; got != "Muse stopped mid-turn: crash_inferred" {
			t.Errorf("message = %q", got)
		}
	})
}

func TestMuseUsageWindow(t *testing.T) {
	reset := time.UnixMilli(1754610000000).UTC()
	t.Run("an exhausted window limits the sessions of the log", func(t *testing.T) {
		events := museFeed(msStarted, msUsageHit)
		claudeSameKinds(t, events, TurnStarted, UsageLimited)
		if f := events[1].Failure; f == nil || f.Class != UsageLimit || !f.ResetAt.Equal(reset) || events[1].Session != "s1" {
			t.Errorf("usage_limited = %+v %+v", events[1], f)
		}
	})
	t.Run("the same observation again adds nothing", func(t *testing.T) {
		claudeSameKinds(t, museFeed(msStarted, msUsageHit, msUsageHit), TurnStarted, UsageLimited)
	})
	t.Run("a model error under an exhausted window is a usage limit with its reset", func(t *testing.T) {
		events := museFeed(msStarted, msUsageHit, msFailed(`{"kind":"modelError","message":"provider returned 429","retryable":true}`))
		f := events[len(events)-1].Failure
		if f.Class != UsageLimit || !f.ResetAt.Equal(reset) {
			t.Errorf("failure = %+v, want usage_limit until %v", f, reset)
		}
	})
	t.Run("both exhausted: the later reset", func(t *testing.T) {
		both := strings.Replace(msUsageHit, `"usedPercent":62`, `"usedPercent":130`, 1)
		events := museFeed(msStarted, both)
		if f := events[1].Failure; !f.ResetAt.Equal(time.UnixMilli(1755000000000).UTC()) {
			t.Errorf("reset = %v, want the weekly one", f.ResetAt)
		}
	})
	t.Run("a window below 100 is no limit", func(t *testing.T) {
		ok := strings.Replace(msUsageHit, `"usedPercent":100`, `"usedPercent":99`, 1)
		events := museFeed(msStarted, ok, msFailed(`{"kind":"modelError","message":"503","retryable":true}`))
		claudeSameKinds(t, events, TurnStarted, TurnFailed)
		if events[1].Failure.Class != ProviderError {
			t.Errorf("class = %s", events[1].Failure.Class)
		}
	})
}

func TestMuseBoxes(t *testing.T) {
	const (
		approval = `{"jsonrpc":"2.0","id":7,"method":"approval/request","params":{"sessionId":"s1","turnId":"t1","approvalId":"a1","toolName":"bash"}}`
		question = `{"jsonrpc":"2.0","method":"userInput/requested","params":{"sessionId":"s1","turnId":"t1","userInputId":"q1","questions":[]}}`
		resolved = `{"jsonrpc":"2.0","method":"approval/resolved","params":{"sessionId":"s1","approvalId":"a1","decision":"approved","resolvedBy":"user"}}`
		settled  = `{"jsonrpc":"2.0","method":"userInput/settled","params":{"sessionId":"s1","userInputId":"q1","outcome":"answered"}}`
		done     = `{"jsonrpc":"2.0","method":"turn/completed","params":{"sessionId":"s1","turnId":"t1","terminal":"completed"}}`
		ack      = `c {"jsonrpc":"2.0","id":7,"result":{}}`
	)
	t.Run("the session waits while any box is open", func(t *testing.T) {
		events := museFeed(msStarted, approval, ack, question, resolved, settled)
		claudeSameKinds(t, events, TurnStarted, BoxOpened, BoxOpened, BoxClosed)
		if events[2].Box != museQuestionBox {
			t.Errorf("box = %q", events[2].Box)
		}
	})
	t.Run("a late twin does not reopen an answered box", func(t *testing.T) {
		twin := strings.Replace(strings.Replace(approval, `"id":7,`, ``, 1), "approval/request", "approval/requested", 1)
		claudeSameKinds(t, museFeed(msStarted, approval, resolved, twin), TurnStarted, BoxOpened, BoxClosed)
	})
	t.Run("no box outlives its turn", func(t *testing.T) {
		claudeSameKinds(t, museFeed(msStarted, approval, done, resolved), TurnStarted, BoxOpened, BoxClosed, TurnDone)
	})
	t.Run("a turn ends once", func(t *testing.T) {
		claudeSameKinds(t, museFeed(msStarted, done, done), TurnStarted, TurnDone)
	})
}

func TestMuseMessages(t *testing.T) {
	t.Run("another client's typing shows as the user message item", func(t *testing.T) {
		item := `{"jsonrpc":"2.0","method":"item/completed","params":{"sessionId":"s1","item":{"kind":"userMessage","text":"hi from the TUI","commandId":"c9","turnId":"t1"}}}`
		events := museFeed(msStarted, item)
		claudeSameKinds(t, events, TurnStarted, UserMessage)
		if events[1].Text != "hi from the TUI" {
			t.Errorf("text = %q", events[1].Text)
		}
	})
	t.Run("a steer is a person's message", func(t *testing.T) {
		steer := `c {"jsonrpc":"2.0","id":5,"method":"turn/steer","params":{"sessionId":"s1","commandId":"c2","expectedTurnId":"t1","input":[{"type":"text","text":"use the other file"},{"type":"image","text":"x"},{"type":"text","text":"and test it"}]}}`
		events := museFeed(msStarted, steer)
		claudeSameKinds(t, events, TurnStarted, UserMessage)
		if events[1].Text != "use the other file\nand test it" {
			t.Errorf("text = %q, want the text parts", events[1].Text)
		}
	})
	t.Run("responses and request errors are not turns", func(t *testing.T) {
		busy := `{"jsonrpc":"2.0","id":4,"error":{"code":-32001,"message":"busy","data":{"kind":"overloaded","retryable":true}}}`
		claudeSameKinds(t, museFeed(busy))
	})
}

func TestMuseBadInput(t *testing.T) {
	r := newMuseReader("x.ndjson")
	for _, l := range []string{
		``, `{`, `[]`, `{"dir":"server"}`, `{"dir":"server","raw":"{"}`, `{"dir":"server","raw":"[1,2]"}`,
		`{"dir":"server","raw":"{\"method\":\"turn/completed\",\"params\":{\"error\":\"boom\",\"terminal\":\"failed\"}}"}`,
		`{"dir":"server","raw":"{\"method\":\"turn/completed\",\"params\":7}"}`,
		`{"dir":"server","raw":"{\"method\":\"session/started\",\"params\":{}}"}`,
		`{"dir":"server","raw":"{\"method\":\"usage/changed\",\"params\":{\"window\":{\"usedPercent\":1e308,\"resetsAtMs\":1e308}}}"}`,
	} {
		for _, e := range r.Read([]byte(l)) {
			if e.Kind == TurnFailed && e.Failure == nil {
				t.Errorf("%s: turn_failed without failure", l)
			}
			if _, err := json.Marshal(e); err != nil {
				t.Errorf("%s: event cannot be written: %v", l, err)
			}
		}
	}
	// A failure whose error is not an object still ends the turn, as unknown.
	events := museFeed(`{"jsonrpc":"2.0","method":"turn/completed","params":{"sessionId":"s1","turnId":"t1","terminal":"failed","error":"boom"}}`)
	if len(events) != 1 || events[0].Failure.Class != Unknown {
		t.Errorf("events = %+v", events)
	}
}

func TestMuseRecognize(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(museSamples, "*.ndjson"))
	for _, name := range files {
		head, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := Recognize(name, head); !ok || a.Name != museName {
			t.Errorf("%s recognised as %q, want muse", filepath.Base(name), a.Name)
		}
	}
	if !recognizeMuse("/home/u/.muse/nudge/frames/conn.ndjson", nil) {
		t.Error("a frame log in its place is Muse's")
	}
	acp := `{"dir":"client","raw":"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"sess_1\",\"prompt\":[]}}"}`
	if recognizeMuse("/tmp/acp.ndjson", []byte(acp)) {
		t.Error("an ACP frame log is not Muse's")
	}
	claude, _ := filepath.Glob(filepath.Join(claudeSamples, "excerpts", "*.jsonl"))
	for _, name := range claude {
		head, _ := os.ReadFile(name)
		if recognizeMuse(name, head) {
			t.Errorf("%s is Claude's, not Muse's", name)
		}
	}
}
