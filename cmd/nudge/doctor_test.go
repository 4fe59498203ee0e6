package main

import (
	"bytes"
	"strings"
	"testing"

	"nudge/internal/status"
)

// doctor counts the failure record shapes nudge does not know and names
// each, with how often it was seen; none is said as such.
func TestDoctorShapes(t *testing.T) {
	var b bytes.Buffer
	doctorHealth(&b, &status.Daemon{})
	if !strings.Contains(b.String(), "shapes: every failure record read since start had a known shape") {
		t.Errorf("no shapes line:\n%s", b.String())
	}
	b.Reset()
	doctorHealth(&b, &status.Daemon{UnknownShapes: []status.UnknownShape{
		{Agent: "claude", Shape: "error=brand_new_category message.content", Count: 2, Path: "/p/a.jsonl"},
		{Agent: "codex", Shape: "codex_error_info=newName message", Count: 1, Path: "/p/r.jsonl"},
	}})
	out := b.String()
	for _, want := range []string{
		"shapes: 3 dead turns in 2 failure record shapes nudge does not know",
		"2 × claude: error=brand_new_category message.content (latest in /p/a.jsonl)",
		"1 × codex: codex_error_info=newName message (latest in /p/r.jsonl)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
