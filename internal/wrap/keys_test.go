package wrap

import (
	"testing"
	"time"
)

func TestUnsentAfter(t *testing.T) {
	cases := []struct {
		before bool
		keys   string
		want   bool
	}{
		{false, "fix the", true},
		{false, "fix the tests\r", false},
		{true, "\r", false},
		{true, "\x03", false},
		{false, "line one\\\r", true},   // backslash-Enter: a new line in the prompt
		{false, "line one\x1b\r", true}, // Alt-Enter
		{false, "\x1b[A", true},         // Up: the history in the prompt
		{false, "\x7f", true},           // Backspace: what is left is not known
		{true, "more", true},
		{false, "\x1b[200~pasted\rblock\x1b[201~", true},
	}
	for _, c := range cases {
		if got := unsentAfter(c.before, []byte(c.keys)); got != c.want {
			t.Errorf("unsentAfter(%v, %q) = %v, want %v", c.before, c.keys, got, c.want)
		}
	}
}

func TestKeysSeen(t *testing.T) {
	var k keysSeen
	now := time.Unix(1000, 0)
	if !k.quiet(now, 5*time.Second) {
		t.Error("no key yet, and not quiet")
	}
	k.typed([]byte("\x1b[I\x1b[O"), now)
	if last, _ := k.seen(); !last.IsZero() {
		t.Error("a focus report counted as a key")
	}
	k.typed([]byte("draft"), now)
	if k.quiet(now.Add(time.Hour), 5*time.Second) {
		t.Error("an unsent draft an hour old counts as quiet")
	}
	k.typed([]byte("\r"), now.Add(time.Second))
	if k.quiet(now.Add(3*time.Second), 5*time.Second) {
		t.Error("a key 2 s ago counts as quiet")
	}
	if !k.quiet(now.Add(6*time.Second), 5*time.Second) {
		t.Error("sent and 5 s without a key, and not quiet")
	}
}
