package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Claude Code record of another version (a public fixture,
// internal/classify/testdata/corpus/claude.jsonl): a session limit under a
// bare rate_limit category and a 429. `classify --why` says the wording
// decided, over the category and the status.
const whyRecord = `{"type":"user","sessionId":"11111111-2222-3333-4444-555555555555","timestamp":"2026-08-19T13:39:00.000Z","message":{"role":"user","content":"hi"}}
{"type":"assistant","sessionId":"11111111-2222-3333-4444-555555555555","timestamp":"2026-08-19T13:40:00.123Z","message":{"content":[{"type":"text","text":"You've hit your session limit · resets 9:50pm (Asia/Saigon)"}]},"error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429}
`

func TestClassifyWhy(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, []byte(whyRecord), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runNudge(t, "", "classify", "--agent", "claude", "--why", file)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	for _, want := range []string{"why: usage_limit by wording in message.content",
		`error type "rate_limit" in error → provider_error`, `HTTP status "429" in apiErrorStatus → provider_error`} {
		if !strings.Contains(last, want) {
			t.Errorf("no %q in the why line:\n%s", want, out)
		}
	}
	if !strings.Contains(lines[len(lines)-2], "turn_failed") {
		t.Errorf("the why line does not follow the dead turn:\n%s", out)
	}

	out, err = runNudge(t, "", "classify", "--agent", "claude", "--why", "--json", file)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	lines = strings.Split(strings.TrimSpace(out), "\n")
	var dead struct {
		Class string
		Why   struct {
			Rule, Field string
			Signals     []string
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &dead); err != nil {
		t.Fatal(err)
	}
	if dead.Class != "usage_limit" || dead.Why.Rule != "wording" || dead.Why.Field != "message.content" || len(dead.Why.Signals) != 3 {
		t.Errorf("--json --why: %+v", dead)
	}
	if strings.Contains(lines[0], `"why"`) {
		t.Errorf("why on an event that is no dead turn: %s", lines[0])
	}
	out, _ = runNudge(t, "", "classify", "--agent", "claude", "--json", file)
	if strings.Contains(out, `"why"`) {
		t.Errorf("why without --why: %s", out)
	}
}
