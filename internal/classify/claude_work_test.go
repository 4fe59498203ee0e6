package classify

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// plainAgrees checks read (claudeWork or claudeToolResults) against
// decoding line: when it takes the line, the decoded record must have the
// same fields but its message, and give the same events and the same
// reader state, with a message waiting in the queue and no question open.
func plainAgrees(t *testing.T, line []byte, read func([]byte, *claudeRecord) bool) (took bool) {
	t.Helper()
	var r claudeRecord
	if !read(line, &r) {
		if !reflect.DeepEqual(r, claudeRecord{}) {
			t.Fatalf("a line not taken changed the record: %q", line)
		}
		return false
	}
	var d claudeRecord
	if !decodeRecord(line, &d) {
		t.Fatalf("a line taken does not decode: %q", line)
	}
	top := d
	top.Message = r.Message
	if !reflect.DeepEqual(top, r) {
		t.Fatalf("%q read as\n%+v\ndecoded\n%+v", line, r, d)
	}
	state := func() *claudeTranscript {
		t := newClaudeTranscript("s.jsonl")
		t.lastDigest, t.queued = "d", &claudeQueued{text: "queued"}
		return t
	}
	fast, full := state(), state()
	if got, want := fast.apply(&r), full.apply(&d); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(fast, full) {
		t.Fatalf("%q: events %+v, state %+v; decoded: %+v, %+v", line, got, fast, want, full)
	}
	return true
}

func workAgrees(t *testing.T, line []byte) bool {
	t.Helper()
	return plainAgrees(t, line, claudeWork)
}

// toolResultsAgree checks claudeToolResults against decoding line: the
// decoded message too has nothing but tool_result blocks.
func toolResultsAgree(t *testing.T, line []byte) bool {
	t.Helper()
	if !plainAgrees(t, line, claudeToolResults) {
		return false
	}
	var d claudeRecord
	decodeRecord(line, &d)
	m := d.Message
	if m.Model != "" || m.StopReason != "" || m.Content.Text != "" || len(m.Content.Blocks) == 0 ||
		slices.ContainsFunc(m.Content.Blocks, func(b claudeBlock) bool { return b.Type != "tool_result" }) {
		t.Fatalf("%q read as tool results; decoded message %+v", line, m)
	}
	return true
}

// claudeAllLines are the lines of every captured transcript, excerpts
// included.
func claudeAllLines(t testing.TB, maxLen int) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(claudeSamples, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Claude samples: %v", err)
	}
	return append(fuzzSeedLines(t, maxLen, files...), claudeSampleLines(t, maxLen)...)
}

// TestClaudeWorkAgreesWithDecoding: every line of the captured
// transcripts, and lines made to look like work while being something
// else; the records of work in the captures are read without decoding.
func TestClaudeWorkAgreesWithDecoding(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(claudeSamples, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Claude samples: %v", err)
	}
	took := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if workAgrees(t, l) {
				took++
			}
		}
	}
	if took < 8 { // the answers and tool calls of interactive-main.jsonl
		t.Errorf("only %d records of work read without decoding", took)
	}
	work := `{"type":"assistant","sessionId":"s","cwd":"/p","timestamp":"2026-01-01T00:00:00Z","uuid":"u","isSidechain":false,"message":{"model":"m","stop_reason":"tool_use","content":[{"type":"tool_use","id":"t","name":"Bash"}]}}`
	if !workAgrees(t, []byte(work)) {
		t.Fatalf("a record of work is decoded: %s", work)
	}
	for _, l := range []string{
		`{"type":"assistant","Type":"user"}`,
		`{"type":"assistant","type":"user"}`,
		`{"type":"assistant","SessionId":"other"}`,
		`{"type":"assistant","sessionId":"a","sessionId":"b"}`,
		`{"type":"assistant","ſessionId":"other"}`,
		`{"type":"assistant","s\u0065ssionId":"other"}`,
		`{"type":"assistant","sessionId":"a\nb"}`,
		`{"type":"assistant","sessionId":7}`,
		`{"type":"assistant","isSidechain":true}`,
		`{"type":"assistant","isApiErrorMessage":true,"error":"rate_limit"}`,
		`{"type":"assistant","ISAPIERRORMESSAGE":1}`,
		`{"type":"assistant","message":{"model":"<synthetic>"}}`,
		`{"type":"assistant","message":{"stop_reason":"end_turn"}}`,
		`{"type":"assistant","message":{"stop_reason":"end\u005fturn"}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"q","name":"AskUserQuestion"}]}}`,
		`{"type":"assistant","isMeta":true}`,
		`{"type":"assistant"`,
		`{"type":"user","message":{"content":"hi"}}`,
	} {
		if workAgrees(t, []byte(l)) {
			t.Errorf("claudeWork took %s", l)
		}
	}
}

// TestClaudeToolResultsAgreeWithDecoding: every line of the captured
// transcripts, and lines made to look like tool results while being
// something else; the tool results of a session at work are read without
// decoding, and a question's answer still closes its box.
func TestClaudeToolResultsAgreeWithDecoding(t *testing.T) {
	took := 0
	for _, l := range claudeAllLines(t, MaxRecordBytes) {
		if toolResultsAgree(t, l) {
			took++
		}
	}
	if took < 3 { // the tool results of interactive-main.jsonl
		t.Errorf("only %d records of tool results read without decoding", took)
	}
	for _, l := range []string{
		`{"type":"user","sessionId":"s","cwd":"/p","timestamp":"2026-01-01T00:00:00Z","uuid":"u","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","content":"\u001b[1mok\u001b[0m [Request interrupted by user]","is_error":false,"tool_use_id":"t"},{"type":"tool_result","content":[{"type":"text","text":"x"}],"tool_use_id":"t2"}]},"toolUseResult":{"stdout":"ok"},"sourceToolAssistantUUID":"a"}`,
		ccBashResult,
	} {
		if !toolResultsAgree(t, []byte(l)) {
			t.Errorf("tool results are decoded: %s", l)
		}
	}
	for _, l := range []string{
		`{"type":"user","message":{"content":[{"type":"tool_result"},{"type":"text","text":"[Request interrupted by user for tool use]"}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}]},"rowSource":"harness"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}]},"promptSource":"typed"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}]},"origin":{"kind":"human"}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}]},"turnOrigin":"auto_continuation"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}]},"isMeta":true}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}]},"isSidechain":true}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}]},"Type":"assistant"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}]},"message":{"content":"hi"}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}]},"Message":{"content":"hi"}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}],"content":[{"type":"text","text":"hi"}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}],"Content":"hi"}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}],"model":"m"}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","Type":"text","text":"hi"}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","type":"text","text":"hi"}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","\u0074ype":"text","text":"hi"}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool\u005fresult"}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"},"hi"]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"},null]}}`,
		`{"type":"user","message":{"content":[]}}`,
		`{"type":"user","message":{"content":"hi"}}`,
		`{"type":"user","message":"hi"}`,
		`{"type":"user"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result"}]}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_result"}]}}`,
	} {
		if toolResultsAgree(t, []byte(l)) {
			t.Errorf("claudeToolResults took %s", l)
		}
	}

	answer := `{"type":"user","message":{"content":[{"type":"tool_result","content":"Red","tool_use_id":"toolu_q"}]}}`
	if !claudeToolResults([]byte(answer), &claudeRecord{}) {
		t.Fatalf("claudeToolResults refused %s", answer)
	}
	r := newClaudeReader("projects/-p/s.jsonl", nil)
	r.Read([]byte(ccAskUser))
	if got := claudeKinds(r.Read([]byte(answer))); !slices.Equal(got, []Kind{BoxClosed, AgentActivity}) {
		t.Errorf("the answer to an open question gives %v", got)
	}
}

// FuzzClaudeWork: claudeWork and claudeToolResults agree with decoding on
// any line.
func FuzzClaudeWork(f *testing.F) {
	for _, l := range claudeAllLines(f, 4096) {
		f.Add(l)
	}
	f.Add([]byte(`{"type":"assistant","sessionId":"s","cwd":"/p","timestamp":"t","uuid":"u","isSidechain":false,"message":{"content":[]}}`))
	f.Add([]byte(`{"type":"user","sessionId":"s","cwd":"/p","timestamp":"t","uuid":"u","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","content":"x","tool_use_id":"t"}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		workAgrees(t, line)
		toolResultsAgree(t, line)
	})
}
