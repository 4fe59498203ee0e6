package safetext

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type kind string

// Every kind of text argument reaches the terminal as one plain line;
// numbers and the caller's format pass as they are.
func TestFprintfKeepsTextPlain(t *testing.T) {
	var b strings.Builder
	osc52 := "\x1b]52;c;ZWNobw==\x07"
	Fprintf(&b, "%s|%v|%s|%q|%d|%s\n", "a"+osc52, errors.New("b\x1b[2J"), kind("c\u202e"), "d\x9b", 42, 1500*time.Millisecond)
	got := b.String()
	want := "a\uFFFD]52;c;ZWNobw==\uFFFD|b\uFFFD[2J|c\uFFFD|\"d\uFFFD\"|42|1.5s\n"
	if got != want {
		t.Fatalf("Fprintf wrote %q, want %q", got, want)
	}
}
