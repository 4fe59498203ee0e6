package classify

import (
	"errors"
	"strings"
	"testing"
)

func TestEachRecordCapsLines(t *testing.T) {
	input := "short\r\n" + strings.Repeat("x", 11) + "\n\n" + strings.Repeat("y", 10) + "\n" + strings.Repeat("z", 200000) + "\nlast"
	var got []string
	var skipped []int
	err := eachRecord(strings.NewReader(input), 10, func(line []byte) {
		got = append(got, string(line))
	}, func(n int) { skipped = append(skipped, n) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"short", strings.Repeat("y", 10), "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("records = %q, want %q", got, want)
	}
	if len(skipped) != 2 || skipped[0] != 12 || skipped[1] != 200001 {
		t.Errorf("skipped = %v, want [12 200001]", skipped)
	}
}

type brokenDisk struct{}

func (brokenDisk) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

func TestEachRecordReportsReadErrors(t *testing.T) {
	err := eachRecord(brokenDisk{}, 10, func([]byte) {}, func(int) {})
	if err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Errorf("err = %v", err)
	}
}

// A transcript's content is read line by line: a line that is no JSON
// record gives nothing, one over the cap is skipped and told, and a last
// line without a newline counts.
func TestReadRecordsTranscript(t *testing.T) {
	huge := `{"type":"user","message":{"content":"` + strings.Repeat("a", MaxRecordBytes) + `"},"promptSource":"typed"}`
	content := ccTyped + "\nnot json\n" + huge + "\n" + ccError500 // no newline at the end
	var skipped []int
	events, err := ReadRecords(newClaudeReader("projects/-p/abc.jsonl", nil), strings.NewReader(content), func(n int) { skipped = append(skipped, n) })
	if err != nil {
		t.Fatal(err)
	}
	claudeSameKinds(t, events, UserMessage, TurnStarted, TurnFailed)
	if len(skipped) != 1 || skipped[0] != len(huge)+1 {
		t.Errorf("skipped %v, want the one line of %d bytes", skipped, len(huge)+1)
	}
}

// A snapshot's content is one record, up to the cap.
func TestReadRecordsWholeFile(t *testing.T) {
	r := newClaudeReader("h/sessions/555.json", nil)
	events, err := ReadRecords(r, strings.NewReader(`{"pid":555,"sessionId":"s","status":"idle"}`), func(int) {})
	if err != nil || len(events) != 1 || events[0].Kind != AgentIdle || events[0].Process.PID != 555 {
		t.Errorf("events %+v, err %v", events, err)
	}
	if _, err := ReadRecords(newClaudeReader("h/sessions/555.json", nil), strings.NewReader(strings.Repeat(" ", MaxRecordBytes+1)), func(int) {}); err == nil {
		t.Error("a snapshot over the cap was read")
	}
}
