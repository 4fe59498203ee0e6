package classify

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// museAnswerLine is a host-query record with a session/read result (MSP
// SessionReadResult) built from its parts, and a usage/read result.
func museAnswerLine(t *testing.T, active, lastTurn, pending, usage string) []byte {
	t.Helper()
	if active == "" {
		active = "null"
	} else {
		active = `"` + active + `"`
	}
	read := `{"session":{"sessionId":"018f7294-0000-7000-8000-5f0e73500000","status":"notLoaded","turnCount":1,` +
		`"activeTurnId":` + active + `,"workspaceRoot":"/home/me/src/proj","path":"/h/.muse/sessions/2026/08/07/018f7294-0000-7000-8000-5f0e73500000/session.jsonl",` +
		`"createdAt":"2026-08-07T18:02:11.412Z","updatedAt":"2026-08-07T18:42:20.010Z","modelId":null,"providerId":null,"forkedFrom":null},` +
		`"history":{"mode":"none","items":null,"snapshot":null},"viewCursor":"v:1","pendingRequests":[` + pending + `]`
	if lastTurn != "" {
		read += `,"lastTurn":` + lastTurn
	}
	read += "}"
	line := `{"sessionId":"018f7294-0000-7000-8000-5f0e73500000","read":` + read
	if usage != "" {
		line += `,"usage":` + usage
	}
	line += "}"
	if !json.Valid([]byte(line)) {
		t.Fatalf("not JSON: %s", line)
	}
	return []byte(line)
}

const museSessionPath = "/h/.muse/sessions/2026/08/07/018f7294-0000-7000-8000-5f0e73500000/session.jsonl"

func museHostReaderFor(t *testing.T) Reader {
	t.Helper()
	a, ok := Lookup("muse")
	if !ok {
		t.Fatal("muse not registered")
	}
	return a.NewReader(museSessionPath, nil)
}

// The provider failure of the official provider-failure-turn transcript,
// as session/read restates it in lastTurn, is a provider error once; the
// person's recovery turn then starts and completes.
func TestMuseHostProviderFailure(t *testing.T) {
	r := museHostReaderFor(t)
	failed := `{"turnId":"018f7294-0000-7000-8000-5f0e73500105","terminal":"failed","reason":"model failed after 3 attempts: provider returned 503 service_unavailable",` +
		`"error":{"kind":"modelError","message":"model failed after 3 attempts: provider returned 503 service_unavailable","retryable":true}}`
	ev := r.Read(museAnswerLine(t, "", failed, "", `{}`))
	if len(ev) != 1 || ev[0].Kind != TurnFailed || ev[0].Failure.Class != ProviderError || ev[0].Failure.Code != "modelError" ||
		ev[0].Session != "018f7294-0000-7000-8000-5f0e73500000" || ev[0].Project != "/home/me/src/proj" ||
		!ev[0].Time.Equal(time.Date(2026, 8, 7, 18, 42, 20, 10e6, time.UTC)) {
		t.Fatalf("events = %+v, want one provider_error", ev)
	}
	if again := r.Read(museAnswerLine(t, "", failed, "", `{}`)); len(again) != 0 {
		t.Errorf("the same answer again: %+v, want nothing", again)
	}
	running := museAnswerLine(t, "018f7294-0000-7000-8000-5f0e73500114", failed, "", "")
	if ev := r.Read(running); len(ev) != 1 || ev[0].Kind != TurnStarted {
		t.Errorf("recovery turn running: %+v, want turn_started", ev)
	}
	if ev := r.Read(running); len(ev) != 1 || ev[0].Kind != AgentActivity {
		t.Errorf("still running: %+v, want agent_activity", ev)
	}
	done := `{"turnId":"018f7294-0000-7000-8000-5f0e73500114","terminal":"completed"}`
	if ev := r.Read(museAnswerLine(t, "", done, "", "")); len(ev) != 1 || ev[0].Kind != TurnDone {
		t.Errorf("recovery done: %+v, want turn_done", ev)
	}
}

func TestMuseHostClasses(t *testing.T) {
	for _, c := range []struct {
		name, lastTurn, usage string
		class                 Class
		reset                 time.Time
	}{
		{"auth", `{"turnId":"t-1","terminal":"failed","error":{"kind":"authRequired","message":"run muse login","retryable":false}}`, "", Auth, time.Time{}},
		{"cancelled", `{"turnId":"t-1","terminal":"cancelled"}`, "", Cancelled, time.Time{}},
		{"host died", `{"turnId":"t-1","terminal":"failed","reason":"crash_inferred"}`, "", Unknown, time.Time{}},
		{"usage window", `{"turnId":"t-1","terminal":"failed","error":{"kind":"modelError","message":"provider returned 429","retryable":true}}`,
			`{"usage":{"observedAtMs":1754600000000,"tier":"t","window":{"usedPercent":100,"resetsAtMs":1754610000000,"windowDurationMins":300},"weekly":{"usedPercent":62,"resetsAtMs":1755000000000}}}`,
			UsageLimit, time.UnixMilli(1754610000000)},
		{"numbers as strings", `{"turnId":"t-1","terminal":"failed","error":{"kind":"modelError","message":"503","retryable":true}}`,
			`{"usage":{"window":{"usedPercent":"40","resetsAtMs":"1754610000000"}}}`, ProviderError, time.Time{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var failed *Event
			for _, e := range museHostReaderFor(t).Read(museAnswerLine(t, "", c.lastTurn, "", c.usage)) {
				if e.Kind == TurnFailed {
					failed = &e
				}
			}
			if failed == nil || failed.Failure.Class != c.class || !failed.Failure.ResetAt.Equal(c.reset) {
				t.Fatalf("turn_failed = %+v, want %s reset %v", failed, c.class, c.reset)
			}
			if c.class == Auth && failed.Failure.Hint != museLoginHint {
				t.Errorf("auth without the login hint: %+v", failed.Failure)
			}
		})
	}
}

// An open approval in pendingRequests is a box until it is gone; a usage
// window at 100 % is told once per reset.
func TestMuseHostBoxesAndUsage(t *testing.T) {
	r := museHostReaderFor(t)
	approval := `{"kind":"approval","approvalId":"0198f0ac-7777-7000-8000-0000000000e1","viewCursor":"v:7"}`
	question := `{"kind":"userInput","userInputId":"u-1","viewCursor":"v:8"}`
	kinds := func(ev []Event) string {
		var k []string
		for _, e := range ev {
			k = append(k, string(e.Kind)+":"+e.Box)
		}
		return strings.Join(k, ",")
	}
	steps := []struct {
		pending, usage, want string
	}{
		{approval, "", "turn_started:,box_opened:approval"},
		{approval + "," + question, "", "agent_activity:,box_opened:question"},
		{question, "", "agent_activity:"},
		{"", `{"usage":{"window":{"usedPercent":104,"resetsAtMs":1754610000000}}}`, "usage_limited:,agent_activity:,box_closed:question"},
		{"", `{"usage":{"window":{"usedPercent":104,"resetsAtMs":1754610000000}}}`, "agent_activity:"},
	}
	for i, s := range steps {
		if got := kinds(r.Read(museAnswerLine(t, "turn-2", "", s.pending, s.usage))); got != s.want {
			t.Errorf("step %d: events %s, want %s", i, got, s.want)
		}
	}
}

// Bad answers are skipped: empty (a stored position), not JSON, no read.
func TestMuseHostBadAnswers(t *testing.T) {
	r := museHostReaderFor(t)
	for _, rec := range []string{``, `nope`, `{"sessionId":"s"}`, `{"read":"x"}`, `{"read":{"lastTurn":7}}`} {
		if ev := r.Read([]byte(rec)); len(ev) != 0 {
			t.Errorf("%q: events %+v, want none", rec, ev)
		}
	}
	if got := museReadBy(museSessionPath); !strings.HasPrefix(got, "host query") {
		t.Errorf("museReadBy(session.jsonl) = %q", got)
	}
	if got := museReadBy("/h/.muse/nudge/frames/a.ndjson"); !strings.HasPrefix(got, "frame log") {
		t.Errorf("museReadBy(frame log) = %q", got)
	}
}

// FuzzMuseHostAnswer feeds two answers to a fresh host reader: nothing
// panics, and events carry the agent, a kind and a failure exactly when
// they should.
func FuzzMuseHostAnswer(f *testing.F) {
	f.Add([]byte(`{"sessionId":"s","read":{"session":{"activeTurnId":null},"lastTurn":{"turnId":"t","terminal":"failed","error":{"kind":"modelError","message":"503","retryable":true}},"pendingRequests":[]}}`),
		[]byte(`{"sessionId":"s","read":{"session":{"activeTurnId":"u"},"pendingRequests":[{"kind":"approval","approvalId":"a"}]},"usage":{"usage":{"window":{"usedPercent":100,"resetsAtMs":1754610000000}}}}`))
	f.Add([]byte(`{"read":{"lastTurn":{"turnId":1,"terminal":["x"]}}}`), []byte(`{"read":{"pendingRequests":{"kind":"approval"}}}`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		r := newMuseHostReader(museSessionPath)
		for _, e := range append(r.Read(first), r.Read(second)...) {
			if e.Agent != museName || e.Kind == "" || e.Session == "" {
				t.Fatalf("event without agent, kind or session: %+v", e)
			}
			if (e.Kind == TurnFailed || e.Kind == UsageLimited) != (e.Failure != nil) {
				t.Fatalf("kind and failure disagree: %+v", e)
			}
		}
	})
}
