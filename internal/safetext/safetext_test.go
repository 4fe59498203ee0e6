package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"API Error: 529 overloaded — try again", "API Error: 529 overloaded — try again"},
		{"", ""},
		{"/home/dev/projekt-ü/日本", "/home/dev/projekt-ü/日本"},
		// OSC 52 (clipboard write), terminated by BEL and by ST.
		{"a\x1b]52;c;ZWNobyBvd25lZA==\x07b", "a\uFFFD]52;c;ZWNobyBvd25lZA==\uFFFDb"},
		{"\x1b]52;c;eA==\x1b\\", "\uFFFD]52;c;eA==\uFFFD\\"},
		// OSC 0 (window title) and OSC 8 (a link hiding its target).
		{"\x1b]0;owned\x07", "\uFFFD]0;owned\uFFFD"},
		{"\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\", "\uFFFD]8;;http://evil.example\uFFFD\\click\uFFFD]8;;\uFFFD\\"},
		// CSI: clear the screen, move the cursor; the 8-bit CSI and OSC.
		{"\x1b[2J\x1b[H", "\uFFFD[2J\uFFFD[H"},
		{"x\u009b2Jy\u009d0;t\u009c", "x\uFFFD2Jy\uFFFD0;t\uFFFD"},
		// Bidi overrides and isolates, and the separators.
		{"file\u202egnp.exe", "file\uFFFDgnp.exe"},
		{"\u2066a\u2067b\u2068c\u2069\u200e\u200f\u061c", "\uFFFDa\uFFFDb\uFFFDc\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"a\u2028b\u2029c", "a\uFFFDb\uFFFDc"},
		// Breaks and tabs become spaces; NUL, DEL and bare bytes do not pass.
		{"one\ntwo\r\nthree\tfour", "one two  three four"},
		{"a\x00b\x7fc\x08d", "a\uFFFDb\uFFFDc\uFFFDd"},
		{"bad \xff\xfe utf-8 \xe2\x82", "bad \uFFFD\uFFFD utf-8 \uFFFD\uFFFD"},
	} {
		if got := Line(c.in); got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzLine: whatever comes in, what goes out is one line of UTF-8 with no
// character that can steer a terminal, the same again when cleaned twice,
// and the input itself when there was nothing to take out.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"plain", "\x1b]52;c;eA==\x07", "\x1b[2J", "\u202e", "\xff", "a\nb\tc", "\u009b31m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Line(in)
		if !utf8.ValidString(out) {
			t.Fatalf("Line(%q) = %q: not UTF-8", in, out)
		}
		for _, r := range out {
			if r == '\n' || r == '\r' || r == '\t' || unsafe(r) {
				t.Fatalf("Line(%q) = %q: keeps %U", in, out, r)
			}
		}
		if again := Line(out); again != out {
			t.Fatalf("Line is not stable: %q then %q", out, again)
		}
		clean := utf8.ValidString(in) && !strings.ContainsFunc(in, func(r rune) bool { return r == '\n' || r == '\r' || r == '\t' || unsafe(r) })
		if clean && out != in {
			t.Fatalf("Line(%q) = %q: changed safe text", in, out)
		}
		if utf8.RuneCountInString(out) != utf8.RuneCountInString(strings.ToValidUTF8(in, "\uFFFD")) && utf8.ValidString(in) {
			t.Fatalf("Line(%q) = %q: not one character for each", in, out)
		}
	})
}
