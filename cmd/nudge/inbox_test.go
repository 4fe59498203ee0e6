package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"nudge/internal/inbox"
)

// An error text of many lines is the agent's, so it may be written to
// pass for more of the listing: each of its lines after the first is
// marked as a continuation of its entry, so none reads as another entry's
// first line or as an entry's error line, and none steers the terminal.
func TestInboxErrorTextStaysInItsEntry(t *testing.T) {
	forged := "● 2026-07-01 09:00:00  #99  claude  /work/bank  0b5e9c1d"
	text := "API Error: 529 overloaded\n" +
		forged + "\n" +
		"  Continued after 10 s.\n" +
		"\n" +
		"         error: \x1b[2Jnothing happened\r\n" +
		"  2026-07-01 09:00:00  #98  codex  /work/x  7a1f\u2028  │ fine\n"
	var b strings.Builder
	printEntry(&b, inbox.EntryRow{
		ID: 7, Time: time.Date(2026, 7, 1, 9, 5, 0, 0, time.Local), Agent: "claude", Project: "/work/shop",
		Session: "5e1c0a3b", What: "Claude Code stopped on a provider error; it was continued.", ErrorText: text,
	})
	out := b.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2+6 {
		t.Fatalf("%d lines for an entry with 6 lines of error text, want 8:\n%s", len(lines), out)
	}
	if lines[2] != "  error: API Error: 529 overloaded" || lines[3] != continued+forged {
		t.Errorf("the error text is not shown line by line:\n%s", out)
	}
	first := regexp.MustCompile(`^\s*●?\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  #\d+ `)
	for i, l := range lines {
		switch {
		case i > 0 && first.MatchString(l):
			t.Errorf("line %d reads as an entry's first line: %q", i, l)
		case i > 2 && strings.HasPrefix(strings.TrimSpace(l), "error:"):
			t.Errorf("line %d reads as an entry's error line: %q", i, l)
		case i > 2 && !strings.HasPrefix(l, continued):
			t.Errorf("line %d is not marked as a continuation: %q", i, l)
		case strings.ContainsFunc(l, unicode.IsControl):
			t.Errorf("line %d keeps a control character: %q", i, l)
		}
	}
	if !first.MatchString(lines[0]) {
		t.Errorf("the entry's own first line %q", lines[0])
	}
}
