package classify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/internal/watch/disk"
)

// kimiLegacySamples is the folder of legacy kimi-cli sessions (internal/classify/testdata/samples/kimi-legacy).
var kimiLegacySamples = filepath.Join("testdata", "samples", "kimi-legacy")

// kimiUTCLog makes log times read as UTC for the test: the constructed
// sample writes UTC where the CLI writes local time (SOURCES.txt).
func kimiUTCLog(t *testing.T) {
	t.Helper()
	old := kimiLogZone
	kimiLogZone = time.UTC
	t.Cleanup(func() { kimiLogZone = old })
}

func TestKimiLegacyGoldenSamples(t *testing.T) {
	kimiUTCLog(t)
	agent := kimiAgent(t, "kimi")
	// Every real sample holds no failure (SOURCES.txt); the first 10 lines
	// are kept upstream, so some end inside a turn.
	for sample, want := range map[string][]kimiTurn{
		"archived":                {{"open", "-"}},
		"broken-state-json":       nil,
		"legacy-protocol-1.3":     {{"open", "-"}},
		"recent-protocol-1.10":    {{"turn_done", "-"}, {"open", "-"}},
		"tiny-hello-world":        nil,
		"with-image":              {{"turn_done", "-"}, {"open", "-"}},
		"with-subagent-collapsed": {{"open", "-"}},
		"with-thinking":           {{"turn_done", "-"}, {"open", "-"}},
		"with-tool-calls":         {{"open", "-"}},
	} {
		t.Run(sample, func(t *testing.T) {
			events, err := readFile(filepath.Join(kimiLegacySamples, sample, "wire.jsonl"), agent)
			if err != nil {
				t.Fatal(err)
			}
			if got := kimiTurns(events); fmt.Sprint(got) != fmt.Sprint(want) {
				kimiLogEvents(t, events)
				t.Errorf("turns %v, want %v", got, want)
			}
			for _, e := range events {
				if e.Agent != "kimi" || e.Session != sample {
					t.Errorf("event %+v", e)
					break
				}
			}
		})
	}
	t.Run("constructed-provider-error", func(t *testing.T) {
		root := filepath.Join(kimiLegacySamples, "constructed-provider-error", ".kimi")
		wires, _ := filepath.Glob(filepath.Join(root, "sessions", "*", "*", "wire.jsonl"))
		if len(wires) != 1 {
			t.Fatalf("wire files %v", wires)
		}
		events, err := readFile(wires[0], agent)
		if err != nil {
			t.Fatal(err)
		}
		want := []kimiTurn{{"turn_failed", "provider_error"}, {"turn_done", "-"}}
		if got := kimiTurns(events); fmt.Sprint(got) != fmt.Sprint(want) {
			kimiLogEvents(t, events)
			t.Fatalf("turns %v, want %v", got, want)
		}
		claudeSameKinds(t, events[:6], UserMessage, TurnStarted, AgentActivity, AgentRetrying, AgentRetrying, TurnFailed)
		e := events[5]
		if e.Session != "7c0f3b2e-4d1a-4e8b-9f6c-2a5d8e1b3c70" || e.Project != "/home/dev/project/app" {
			t.Errorf("session %q project %q", e.Session, e.Project)
		}
		f := e.Failure
		if f.Code != "APIStatusError/503" || !strings.Contains(f.Message, "The engine is currently overloaded") ||
			!strings.HasSuffix(f.Message, "(request req-8f2c1e0a7b3d)") {
			t.Errorf("failure %+v", f)
		}
	})
	t.Run("multi-workdir buckets name their project", func(t *testing.T) {
		root := filepath.Join(kimiLegacySamples, "multi-workdir", ".kimi")
		buckets, _ := filepath.Glob(filepath.Join(root, "sessions", "*"))
		named := 0
		for _, b := range buckets {
			if kimiLegacyWorkDir(disk.Files{}, root, filepath.Base(b)) != "" {
				named++
			}
		}
		if len(buckets) != 3 || named != 3 {
			t.Errorf("%d of %d buckets named", named, len(buckets))
		}
	})
}

// kimiLegacyHome lays out a legacy root with one session and returns the
// wire path and the log path.
func kimiLegacyHome(t *testing.T) (wire, log string) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "sessions", "6e36e4da6a843ddc0d60aef96cd415dc", "sid-1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "wire.jsonl"), filepath.Join(root, "logs", "kimi.log")
}

// Wire records (docs/agents/kimi.md B2, B3), at 2026-07-20 10:11:12.712 UTC and later.
const (
	klBegin       = `{"timestamp": 1784542270.101, "message": {"type": "TurnBegin", "payload": {"user_input": [{"type": "text", "text": "fix the failing test"}]}}}`
	klStep        = `{"timestamp": 1784542270.104, "message": {"type": "StepBegin", "payload": {"n": 1}}}`
	klRetry       = `{"timestamp": 1784542270.413, "message": {"type": "StepRetry", "payload": {"n": 1, "next_attempt": 2, "max_attempts": 3, "wait_s": 0.61, "error_type": "APIStatusError", "status_code": 503}}}`
	klInterrupted = `{"timestamp": 1784542272.712, "message": {"type": "StepInterrupted", "payload": {}}}`
	klEnd         = `{"timestamp": 1784542272.715, "message": {"type": "TurnEnd", "payload": {}}}`
)

// klLog is a log line of session sid-1 at 10:11:12.711 (UTC in these tests).
func klLog(message string) string {
	return "2026-07-20 10:11:12.711 | ERROR    | kimi_cli.soul.kimisoul:_agent_loop:1049 | sid-1 - " + message
}

func feed(r Reader, lines ...string) []Event {
	var out []Event
	for _, l := range lines {
		out = append(out, r.Read([]byte(l))...)
	}
	return out
}

func TestKimiLegacyPairing(t *testing.T) {
	kimiUTCLog(t)
	for _, tc := range []struct {
		name, log string
		class     Class
	}{
		{"503", "Agent step 1 failed: APIStatusError: Error code: 503 - {'error': {'message': 'overloaded'}} (request_id=req-1)", ProviderError},
		{"500", "Agent step 1 failed: APIStatusError: Error code: 500 - {'error': {'message': 'x'}}", ProviderError},
		{"connection", "Agent step 2 failed: APIConnectionError: Connection error.", ProviderError},
		{"timeout", "Agent step 1 failed: APITimeoutError: Request timed out.", ProviderError},
		{"rate", "Agent step 1 failed: APIStatusError: Error code: 429 - {'error': {'message': 'max RPM: 3, please try again after 1 seconds', 'type': 'rate_limit_reached_error'}}", ProviderError},
		{"quota", "Agent step 1 failed: APIStatusError: Error code: 429 - {'error': {'message': 'suspended due to insufficient balance', 'type': 'exceeded_current_quota_error'}}", UsageLimit},
		{"openai quota", "Agent step 1 failed: APIStatusError: Error code: 429 - {'error': {'type': 'insufficient_quota'}}", UsageLimit},
		{"402", "Agent step 1 failed: APIStatusError: Error code: 402 - {'error': {'message': 'Membership expired'}}", UsageLimit},
		{"401", "Agent step 1 failed: APIStatusError: Error code: 401 - {'error': {'message': 'Invalid Authentication'}}", Auth},
		{"403", "Agent step 1 failed: APIStatusError: Error code: 403 - {}", Auth},
		{"400", "Agent step 1 failed: APIStatusError: Error code: 400 - {'error': {'message': 'bad'}}", Rejected},
		{"context", "Agent step 1 failed: BadRequest: the prompt exceeds the context length", Rejected},
		{"a bare 429", "Agent step 1 failed: APIStatusError: Error code: 429 - {}", ProviderError},
		{"other", "Agent step 1 failed: LLMNotSupported: images", Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wire, log := kimiLegacyHome(t)
			// The daemon's order: the log line is read before the wire records.
			feed(newKimiLegacyReader(log, disk.Files{}), klLog(tc.log))
			events := feed(newKimiLegacyReader(wire, disk.Files{}), klBegin, klStep, klInterrupted, klEnd)
			claudeSameKinds(t, events, UserMessage, TurnStarted, AgentActivity, TurnFailed)
			f := events[3].Failure
			if f.Class != tc.class {
				t.Errorf("class %s, want %s (%+v)", f.Class, tc.class, f)
			}
			if (f.Class == Auth) != (f.Hint == kimiLegacyLoginHint) {
				t.Errorf("hint %q", f.Hint)
			}
		})
	}
}

func TestKimiLegacyPairingOrderAndWindow(t *testing.T) {
	kimiUTCLog(t)
	failed := klLog("Agent step 1 failed: APIStatusError: Error code: 503 - {} (request_id=req-9)")
	t.Run("wire read before the log: the end of the log file is read", func(t *testing.T) {
		wire, log := kimiLegacyHome(t)
		feed(newKimiLegacyReader(log, disk.Files{}), "2026-07-20 09:00:00.000 | INFO     | kimi_cli.app:main:1 | other - started")
		if err := os.WriteFile(log, []byte("partial first line\n"+failed+"\nTraceback (most recent call last):\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		events := feed(newKimiLegacyReader(wire, disk.Files{}), klBegin, klInterrupted, klEnd)
		if f := events[len(events)-1].Failure; f == nil || f.Class != ProviderError || !strings.Contains(f.Message, "req-9") {
			t.Errorf("failure %+v", f)
		}
	})
	t.Run("no log line: unknown", func(t *testing.T) {
		wire, _ := kimiLegacyHome(t)
		events := feed(newKimiLegacyReader(wire, disk.Files{}), klBegin, klInterrupted, klEnd)
		if f := events[len(events)-1].Failure; f == nil || f.Class != Unknown {
			t.Errorf("failure %+v", f)
		}
	})
	t.Run("another session's line or a far time does not pair", func(t *testing.T) {
		wire, log := kimiLegacyHome(t)
		other := strings.Replace(failed, "sid-1", "sid-2", 1)
		late := strings.Replace(failed, "10:11:12.711", "10:11:20.711", 1)
		feed(newKimiLegacyReader(log, disk.Files{}), other, late)
		events := feed(newKimiLegacyReader(wire, disk.Files{}), klBegin, klInterrupted, klEnd)
		if f := events[len(events)-1].Failure; f == nil || f.Class != Unknown {
			t.Errorf("failure %+v", f)
		}
	})
	t.Run("an hour off pairs (a DST change)", func(t *testing.T) {
		wire, log := kimiLegacyHome(t)
		feed(newKimiLegacyReader(log, disk.Files{}), strings.Replace(failed, "10:11:12.711", "11:11:12.711", 1))
		events := feed(newKimiLegacyReader(wire, disk.Files{}), klBegin, klInterrupted, klEnd)
		if f := events[len(events)-1].Failure; f == nil || f.Class != ProviderError {
			t.Errorf("failure %+v", f)
		}
	})
	t.Run("retry lines are the CLI's own", func(t *testing.T) {
		wire, log := kimiLegacyHome(t)
		feed(newKimiLegacyReader(log, disk.Files{}), klLog("Retrying step for the 1 time (last error: APIStatusError: Error code: 503 - {}). Waiting 0.61 seconds."))
		events := feed(newKimiLegacyReader(wire, disk.Files{}), klBegin, klStep, klRetry, klInterrupted, klEnd)
		claudeSameKinds(t, events, UserMessage, TurnStarted, AgentActivity, AgentRetrying, TurnFailed)
		if f := events[4].Failure; f.Class != Unknown {
			t.Errorf("failure %+v", f)
		}
	})
}

func TestKimiLegacyTurnEndWithoutInterrupt(t *testing.T) {
	kimiUTCLog(t)
	end := strings.Replace(klEnd, "1784542272.715", "1784542272.800", 1)
	for _, tc := range []struct {
		log   string
		kind  Kind
		class Class
	}{
		{"", TurnDone, ""},
		{"Cancelled by user", TurnFailed, Cancelled},
		{"Interrupted by user", TurnFailed, Cancelled},
		{"Max steps reached: 100", TurnFailed, Unknown},
		// A failure line without StepInterrupted does not fail the turn.
		{"Agent step 1 failed: APIStatusError: Error code: 503 - {}", TurnDone, ""},
	} {
		wire, log := kimiLegacyHome(t)
		lr := newKimiLegacyReader(log, disk.Files{})
		if tc.log != "" {
			feed(lr, klLog(tc.log))
		}
		events := feed(newKimiLegacyReader(wire, disk.Files{}), klBegin, klStep, end)
		last := events[len(events)-1]
		if last.Kind != tc.kind || tc.class != "" && last.Failure.Class != tc.class {
			t.Errorf("%q: last event %+v", tc.log, last)
		}
	}
}

// TestKimiLegacyLogGrowsBetweenTurns reads the log files again once they
// grew: a line written after an earlier turn's scan still pairs.
func TestKimiLegacyLogGrowsBetweenTurns(t *testing.T) {
	kimiUTCLog(t)
	wire, log := kimiLegacyHome(t)
	if err := os.WriteFile(log, []byte("2026-07-20 09:00:00.000 | INFO     | kimi_cli.app:main:1 | other - started\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := newKimiLegacyReader(wire, disk.Files{})
	early := strings.Replace(klEnd, "1784542272.715", "1784542200.000", 1)
	claudeSameKinds(t, feed(r, klBegin, klStep, early), UserMessage, TurnStarted, AgentActivity, TurnDone)
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(klLog("Cancelled by user") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	events := feed(r, klBegin, klStep, strings.Replace(klEnd, "1784542272.715", "1784542272.800", 1))
	if last := events[len(events)-1]; last.Kind != TurnFailed || last.Failure.Class != Cancelled {
		t.Errorf("last event %+v, want the cancel the grown log names", last)
	}
}

func TestKimiLegacyBoxesAndInput(t *testing.T) {
	wire, _ := kimiLegacyHome(t)
	approval := `{"timestamp": 1773128644.112614, "message": {"type": "ApprovalRequest", "payload": {"id": "a1", "tool_call_id": "Shell:0", "sender": "Shell", "action": "run command", "description": "Run"}}}`
	approved := `{"timestamp": 1773128714.045961, "message": {"type": "ApprovalResponse", "payload": {"request_id": "a1", "response": "approve_for_session"}}}`
	question := `{"timestamp": 1773128715.0, "message": {"type": "QuestionRequest", "payload": {"id": "q1", "tool_call_id": "Ask:1", "questions": []}}}`
	answered := `{"timestamp": 1773128716.0, "message": {"type": "ToolResult", "payload": {"tool_call_id": "Ask:1", "return_value": {}}}}`
	steer := `{"timestamp": 1773128717.0, "message": {"type": "SteerInput", "payload": {"user_input": "also this"}}}`
	events := feed(newKimiLegacyReader(wire, disk.Files{}), klBegin, approval, approved, question, answered, steer, question, klEnd)
	claudeSameKinds(t, events, UserMessage, TurnStarted, BoxOpened, BoxClosed, BoxOpened, BoxClosed, AgentActivity,
		UserMessage, BoxOpened, BoxClosed, TurnDone)
	if events[0].Text != "fix the failing test" || events[7].Text != "also this" {
		t.Errorf("texts %q %q", events[0].Text, events[7].Text)
	}
	if events[2].Box != "a1" || events[3].Box != "a1" || events[4].Box != "q1" || events[9].Box != "q1" {
		t.Errorf("boxes %+v", events)
	}
	if want := time.Date(2026, 7, 20, 10, 11, 10, 101e6, time.UTC); events[0].Time.Sub(want).Abs() > time.Millisecond {
		t.Errorf("time %v, want %v", events[0].Time, want)
	}
}

func TestKimiLegacyMalformedRecords(t *testing.T) {
	wire, log := kimiLegacyHome(t)
	lr, wr := newKimiLegacyReader(log, disk.Files{}), newKimiLegacyReader(wire, disk.Files{})
	for _, line := range []string{
		``, `{`, `not json`, `[]`, `null`, `{"timestamp": "x", "message": 5}`, klEnd[:30],
		`{"timestamp": 1e300, "message": {"type": "TurnEnd", "payload": []}}`,
		"2026-13-45 99:99:99.999 | ERROR | m | sid-1 - Agent step 1 failed: X: y", "| | | - Agent step",
	} {
		feed(lr, line)
		feed(wr, line)
	}
}
