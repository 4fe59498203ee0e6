package classify

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// workAgrees checks claudeWork against decoding line: when it takes the
// line, the decoded record must have the same fields Read looks at and
// give the same events and the same reader state.
func workAgrees(t *testing.T, line []byte) (took bool) {
	t.Helper()
	var r claudeRecord
	if !claudeWork(line, &r) {
		if !reflect.DeepEqual(r, claudeRecord{}) {
			t.Fatalf("claudeWork changed the record of a line it did not take: %q", line)
		}
		return false
	}
	var d claudeRecord
	if !decodeRecord(line, &d) {
		t.Fatalf("claudeWork took a line that does not decode: %q", line)
	}
	if d.Type != r.Type || d.SessionID != r.SessionID || d.Cwd != r.Cwd || d.Timestamp != r.Timestamp || d.UUID != r.UUID || d.IsSidechain {
		t.Fatalf("claudeWork read %q as\n%+v\ndecoded\n%+v", line, r, d)
	}
	ts, _ := time.Parse(time.RFC3339Nano, r.Timestamp)
	fast, full := newClaudeTranscript("s.jsonl"), newClaudeTranscript("s.jsonl")
	fast.lastDigest, full.lastDigest = "d", "d"
	if got, want := fast.assistant(&r, ts), full.assistant(&d, ts); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(fast, full) {
		t.Fatalf("%q: events %+v, state %+v; decoded: %+v, %+v", line, got, fast, want, full)
	}
	return true
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

// FuzzClaudeWork: claudeWork agrees with decoding on any line.
func FuzzClaudeWork(f *testing.F) {
	for _, l := range claudeSampleLines(f, 4096) {
		f.Add(l)
	}
	f.Add([]byte(`{"type":"assistant","sessionId":"s","cwd":"/p","timestamp":"t","uuid":"u","isSidechain":false,"message":{"content":[]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		workAgrees(t, line)
	})
}
