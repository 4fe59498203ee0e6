package classify

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// codexWorkAgrees checks codexWork against decoding line: when it takes
// the line, decoding it gives the same events and leaves the reader in
// the same state, from one with a call pending, a stream open and a
// legacy turn open.
func codexWorkAgrees(t *testing.T, line []byte) (took bool) {
	t.Helper()
	var r codexRecord
	if !codexWork(line, &r) {
		if !reflect.DeepEqual(r, codexRecord{}) {
			t.Fatalf("a line not taken changed the record: %q", line)
		}
		return false
	}
	var d codexRecord
	if !decodeRecord(line, &d) {
		t.Fatalf("a line taken does not decode: %q", line)
	}
	state := func() *codexRollout {
		t := newCodexRollout("sessions/2026/11/30/rollout-x.jsonl", nil)
		t.pending["call_1"], t.streamOpen, t.legacyOpen = struct{}{}, true, true
		return t
	}
	fast, full := state(), state()
	if got, want := fast.apply(&r), full.apply(&d); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(fast, full) {
		t.Fatalf("%q: events %+v, state %+v; decoded: %+v, %+v", line, got, fast, want, full)
	}
	return true
}

// codexAllLines are the lines of the captured rollouts, up to maxLen
// bytes each.
func codexAllLines(t testing.TB, maxLen int) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(codexSamples, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Codex samples: %v", err)
	}
	return fuzzSeedLines(t, maxLen, files...)
}

// TestCodexWorkAgreesWithDecoding: every line of the captured rollouts,
// and lines made to look like work while being something else; the
// records of work in the captures are read without decoding.
func TestCodexWorkAgreesWithDecoding(t *testing.T) {
	took := map[string]int{}
	for _, l := range codexAllLines(t, MaxRecordBytes) {
		if codexWorkAgrees(t, l) {
			var r codexRecord
			codexWork(l, &r)
			took[r.Type+" "+r.Payload.Type]++
		}
	}
	for _, kind := range []string{"response_item message", "response_item function_call", "response_item function_call_output", "event_msg item_completed", "event_msg token_count"} {
		if took[kind] == 0 {
			t.Errorf("no %s of the captures was read without decoding (%v)", kind, took)
		}
	}
	work := `{"timestamp":"2026-11-30T10:00:00.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"call_1"}}`
	if !codexWorkAgrees(t, []byte(work)) {
		t.Fatalf("codexWork refused %s", work)
	}
	for _, l := range []string{
		strings.Replace(work, `"type":"function_call"`, `"type":"function_call","Type":"message"`, 1),
		strings.Replace(work, `"call_id":"call_1"`, `"call_id":"call_1","call_id":"call_2"`, 1),
		strings.Replace(work, `"call_id":"call_1"`, `"call_id":"call\u005f1"`, 1),
		strings.Replace(work, `"call_id":"call_1"`, `"CALL_ID":"call_1"`, 1),
		strings.Replace(work, `"type":"response_item"`, `"type":"response_item","Payload":{}`, 1),
		strings.Replace(work, `"function_call"`, `"message","role":"user"`, 1),
		strings.Replace(work, `"function_call"`, `"message","role":"developer"`, 1),
		strings.Replace(work, `"function_call"`, `"message"`, 1),
		strings.Replace(work, `"timestamp":"2026-11-30T10:00:00.000Z"`, `"timestamp":1`, 1),
		strings.Replace(work, `"type":"response_item"`, `"type":"event_msg"`, 1),
		`{"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[]}}}`,
		`{"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","item":{"type":""}}}`,
		`{"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","TYPE":"UserMessage"}}}`,
		`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":null,"Info":{}}}`,
		`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{},"rate_limits":{},"rate_limits":null}}`,
		work[:len(work)-1],
	} {
		if codexWorkAgrees(t, []byte(l)) {
			t.Errorf("codexWork took %s", l)
		}
	}
}

// FuzzCodexWork: codexWork agrees with decoding on any line.
func FuzzCodexWork(f *testing.F) {
	for _, l := range codexAllLines(f, 4096) {
		f.Add(l)
	}
	f.Add([]byte(`{"timestamp":"t","ordinal":3,"type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"ok"}}`))
	f.Add([]byte(`{"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","item":{"type":"Reasoning","content":[]}}}`))
	f.Add([]byte(`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":100,"resets_at":1796032565},"secondary":7}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		codexWorkAgrees(t, line)
	})
}
