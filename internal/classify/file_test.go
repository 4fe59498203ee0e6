package classify

import (
	"errors"
	"os"
	"path/filepath"
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

func TestReadFileTranscript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "abc.jsonl")
	huge := `{"type":"user","message":{"content":"` + strings.Repeat("a", MaxRecordBytes) + `"},"promptSource":"typed"}`
	content := ccTyped + "\nnot json\n" + huge + "\n" + ccError500 // no newline at the end
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := ReadFile(path, claudeAgent(t))
	if err != nil {
		t.Fatal(err)
	}
	claudeSameKinds(t, events, UserMessage, TurnStarted, TurnFailed)
	if _, err := ReadFile(filepath.Join(dir, "missing.jsonl"), claudeAgent(t)); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: %v", err)
	}
}
