package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// fuzzSeedLines returns the lines of files of at most maxLen bytes, as fuzz
// seeds.
func fuzzSeedLines(t testing.TB, maxLen int, files ...string) [][]byte {
	t.Helper()
	var lines [][]byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, MaxRecordBytes)
		for sc.Scan() {
			if len(sc.Bytes()) <= maxLen {
				lines = append(lines, bytes.Clone(sc.Bytes()))
			}
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no seed lines in %v", files)
	}
	return lines
}

// fuzzCheckEvents holds for every reader: each event names its agent,
// session and kind, only turn_failed and usage_limited carry a failure, and
// the event can be printed and saved.
func fuzzCheckEvents(t *testing.T, agent string, events []Event) {
	t.Helper()
	for _, e := range events {
		if e.Agent != agent || e.Kind == "" || e.Session == "" {
			t.Fatalf("event without agent, session or kind: %+v", e)
		}
		if hasFailure := e.Kind == TurnFailed || e.Kind == UsageLimited; hasFailure != (e.Failure != nil) {
			t.Fatalf("kind and failure disagree: %+v", e)
		}
		if _, err := e.MarshalLine(); err != nil {
			t.Fatalf("event cannot be printed: %v", err)
		}
		if _, err := json.Marshal(e); err != nil {
			t.Fatalf("event cannot be saved: %v", err)
		}
	}
}
