package classify

import (
	"fmt"
	"path/filepath"
	"testing"
)

const copilotSamples = "testdata/samples/copilot"

// copilotPath is an event log's place, as the tests name it.
const copilotPath = "session-state/1d8ee514-a555-49c8-81bb-e9b1c1214998/events.jsonl"

// TestCopilotExpected reads every sample (EXPECTED.tsv) and checks its last
// turn ending, its agent, session and project.
func TestCopilotExpected(t *testing.T) {
	checkSamples(t, copilotSamples, copilotName, "session-state/*/events.jsonl")
}

// copilotLine is an event as the CLI writes one.
func copilotLine(typ, data string) []byte {
	return fmt.Appendf(nil, `{"type":%q,"data":%s,"id":"6501bea0-37e7-4c04-ad39-1da6104242c6","timestamp":"2026-12-04T03:53:14.045Z","parentId":null}`, typ, data)
}

// TestCopilotFailures: each session.error the CLI records for a failed
// turn (docs/agents/copilot.md §4) reads as its class; *(source)* rows are
// the shapes of GitHub Copilot's own service, read in the CLI but not run.
func TestCopilotFailures(t *testing.T) {
	cases := []struct {
		data string
		want Class
		code string
	}{
		// seen (samples)
		{`{"errorType":"query","message":"400 Invalid request: the prompt exceeds the model's maximum context length","statusCode":400}`, Rejected, "query"},
		{`{"errorType":"authentication","message":"Authentication failed with provider at http://127.0.0.1:18588/v1 (HTTP 401).\n  Check your COPILOT_PROVIDER_API_KEY.","statusCode":401}`, Auth, "authentication"},
		{`{"errorType":"query","message":"Model 'fake-model' not found on provider at http://127.0.0.1:18707/v1 (HTTP 404).","statusCode":404}`, Rejected, "query"},
		{`{"errorType":"rate_limit","message":"Failed to get response from the AI model; retried 5 times (total retry wait time: 5.56 seconds) Last error: 429 Your account org-fake request reached organization max RPM: 3, please try again after 1 seconds","statusCode":429}`, ProviderError, "rate_limit"},
		{`{"errorType":"rate_limit","message":"Failed to get response from the AI model; retried 5 times (total retry wait time: 53.35 seconds) Last error: 429 You exceeded your current quota, please check your plan and billing details.","statusCode":429}`, UsageLimit, "rate_limit"},
		{`{"errorType":"query","message":"Failed to get response from the AI model; retried 5 times (total retry wait time: 16.06 seconds) Last error: 500 fake internal server error","statusCode":500}`, ProviderError, "query"},
		{`{"errorType":"query","message":"Failed to get response from the AI model; retried 5 times (total retry wait time: 5.00 seconds) Last error: Failed native model HTTP request: error sending request for url (http://127.0.0.1:18783/v1/chat/completions): client error (SendRequest): connection closed before message completed"}`, ProviderError, "query"},
		// source
		{`{"errorType":"quota","errorCode":"quota_exceeded","message":"No remaining quota for premium requests","statusCode":402}`, UsageLimit, "quota/quota_exceeded"},
		{`{"errorType":"rate_limit","errorCode":"user_weekly_rate_limited","message":"You've reached your weekly rate limit.","statusCode":429}`, UsageLimit, "rate_limit/user_weekly_rate_limited"},
		{`{"errorType":"rate_limit","errorCode":"user_model_rate_limited","message":"You've hit the rate limit for this model. Please switch models or wait for your limit to reset","statusCode":429}`, UsageLimit, "rate_limit/user_model_rate_limited"},
		{`{"errorType":"rate_limit","errorCode":"rate_limited","message":"Sorry, you have been rate-limited.","statusCode":429}`, ProviderError, "rate_limit/rate_limited"},
		{`{"errorType":"authorization","message":"You do not have access to this model","statusCode":403}`, Auth, "authorization"},
		{`{"errorType":"context_limit","message":"The conversation is too long"}`, Rejected, "context_limit"},
		{`{"errorType":"query","message":"something nobody has seen"}`, Unknown, "query"},
		{`{"errorType":"","message":""}`, Unknown, ""},
	}
	for _, c := range cases {
		data := c.data[:len(c.data)-1] + `,"originatingMessageId":"596044ba-56ef-4f79-9fd3-5e5986060689"}`
		events := newCopilotEvents(copilotPath, nil).Read(copilotLine("session.error", data))
		if len(events) != 1 || events[0].Kind != TurnFailed || events[0].Failure == nil {
			t.Fatalf("%s: events %+v", c.data, events)
		}
		f := events[0].Failure
		if f.Class != c.want || f.Code != c.code || f.Message == "" || f.Provider != "" {
			t.Errorf("%s: class %s code %q (%s), want %s %q", c.data, f.Class, f.Code, f.Why(), c.want, c.code)
		}
		if f.Class == Auth && f.Hint != copilotLoginHint {
			t.Errorf("%s: hint %q", c.data, f.Hint)
		}
	}
}

// TestCopilotRecords: what each kind of record gives.
func TestCopilotRecords(t *testing.T) {
	cases := []struct {
		line string
		want []Kind
	}{
		{string(copilotLine("session.start", `{"sessionId":"1d8ee514-a555-49c8-81bb-e9b1c1214998","producer":"copilot-agent","context":{"cwd":"/p"}}`)), nil},
		{string(copilotLine("system.message", `{"role":"system","content":"You are the GitHub Copilot CLI"}`)), nil},
		{string(copilotLine("user.message", `{"content":"say hi","transformedContent":"<current_datetime>…</current_datetime>\n\nsay hi"}`)), []Kind{UserMessage, TurnStarted}},
		{string(copilotLine("assistant.turn_start", `{"turnId":"0"}`)), []Kind{AgentActivity}},
		{string(copilotLine("assistant.message", `{"content":"Hello","toolRequests":[]}`)), []Kind{TurnDone}},
		{string(copilotLine("assistant.message", `{"content":"","toolRequests":[{"toolCallId":"t1","name":"bash"}]}`)), []Kind{AgentActivity}},
		{string(copilotLine("assistant.message", `{"content":"Let me look.","toolRequests":[{"toolCallId":"t1","name":"bash"}]}`)), []Kind{AgentActivity}},
		{string(copilotLine("tool.execution_complete", `{"toolCallId":"t1","success":true}`)), []Kind{AgentActivity}},
		{string(copilotLine("assistant.turn_end", `{"turnId":"0"}`)), nil},
		{string(copilotLine("abort", `{"reason":"user_initiated"}`)), []Kind{TurnFailed}},
		{string(copilotLine("session.error", `{"errorType":"session","message":"Failed to attach to live target pid 1"}`)), nil},
		{string(copilotLine("session.warning", `{"warningType":"mcp","message":"careful"}`)), nil},
		{string(copilotLine("session.info", `{"infoType":"folder_trust","message":"added"}`)), nil},
		{`{"type":"assistant.message","data":{"content":"Hi","toolRequests":[]},"id":"x","agentId":"sub-1","timestamp":"2026-12-04T03:53:14.045Z"}`, []Kind{AgentActivity}},
		{`{"type":"assistant.message","data":{"content":"Hi"}}`, nil},
		{`{"type":"assistant.message","data":"x","id":"x"}`, nil},
		{`{"type":"user.message","data":{"content":`, nil},
		{`[1,2]`, nil},
	}
	for _, c := range cases {
		events := newCopilotEvents(copilotPath, nil).Read([]byte(c.line))
		var got []Kind
		for _, e := range events {
			got = append(got, e.Kind)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: kinds %v, want %v", c.line, got, c.want)
		}
	}
}

// TestCopilotContext: the session is the folder's name, the project the
// session's working directory, and a failure names the model selected last.
func TestCopilotContext(t *testing.T) {
	r := newCopilotEvents(copilotPath, nil)
	r.Read(copilotLine("session.start", `{"context":{"cwd":"/home/dev/project"},"selectedModel":"gpt-5"}`))
	r.Read(copilotLine("session.model_change", `{"newModel":"claude-sonnet-5"}`))
	events := r.Read(copilotLine("session.error", `{"errorType":"query","message":"500","statusCode":500,"originatingMessageId":"m"}`))
	if len(events) != 1 {
		t.Fatalf("events %+v", events)
	}
	e := events[0]
	if e.Session != "1d8ee514-a555-49c8-81bb-e9b1c1214998" || e.Project != "/home/dev/project" || e.Failure.Model != "claude-sonnet-5" {
		t.Errorf("event %+v, failure %+v", e, e.Failure)
	}
	for in, want := range map[string]string{
		"id: x\ncwd: /home/dev/project\nname: y\n": "/home/dev/project",
		"cwd: \"/home/dev/a: b\"\n":                "/home/dev/a: b",
		"cwd: '/home/dev/c'\n":                     "/home/dev/c",
		"cwd: \"broken\n":                          "",
		"name: no cwd\n":                           "",
	} {
		if got := workspaceCwd([]byte(in)); got != want {
			t.Errorf("workspaceCwd(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCopilotApprovals: an approval opens a box until the last open one
// is answered (docs/agents/copilot.md §6).
func TestCopilotApprovals(t *testing.T) {
	r := newCopilotEvents(copilotPath, nil)
	var got []string
	for _, l := range [][]byte{
		copilotLine("permission.requested", `{"requestId":"a","permissionRequest":{"kind":"shell"}}`),
		copilotLine("permission.requested", `{"requestId":"b","permissionRequest":{"kind":"write"}}`),
		copilotLine("permission.completed", `{"requestId":"a","result":{"kind":"approved"}}`),
		copilotLine("permission.completed", `{"requestId":"b","result":{"kind":"denied-interactively-by-user"}}`),
		copilotLine("permission.completed", `{"requestId":"c"}`),
		copilotLine("permission.requested", `{}`),
	} {
		for _, e := range r.Read(l) {
			got = append(got, string(e.Kind)+" "+e.Box)
		}
	}
	want := "[box_opened a box_opened b box_closed b box_closed c]"
	if fmt.Sprint(got) != want {
		t.Errorf("boxes %v, want %s", got, want)
	}
}

// TestRecognizeCopilot: by the log's place, or by its first record.
func TestRecognizeCopilot(t *testing.T) {
	for path, want := range map[string]bool{
		filepath.Join("/home/dev/.copilot", copilotPath): true,
		"/elsewhere/events.jsonl":                        false,
		"/home/dev/.copilot/session-state/x/other.jsonl": false,
	} {
		if got := recognizeCopilot(path, nil); got != want {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
	head := copilotLine("session.start", `{"sessionId":"1d8ee514-a555-49c8-81bb-e9b1c1214998","version":1,"producer":"copilot-agent"}`)
	if !recognizeCopilot("/tmp/x.jsonl", head) {
		t.Error("first record not recognised")
	}
}
