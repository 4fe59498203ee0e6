// Package safetext makes text from an agent's records safe to show as
// plain text: in the person's terminal and in a desktop notification, and
// inside the JSON nudge prints (EncodeJSON).
package safetext

import (
	"strings"
	"unicode/utf8"
)

// Replacement stands for every character Line takes out.
const Replacement = '\uFFFD'

// Line returns s as one line that cannot steer a terminal: a tab or line
// break becomes a space; every other control character (C0 including ESC,
// DEL, C1 including CSI and OSC), every bidirectional override or isolate,
// the Unicode line and paragraph separators and every byte that is not
// UTF-8 become U+FFFD. What remains of an escape sequence after its ESC is
// plain printable text.
func Line(s string) string {
	if isSafe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(Replacement)
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case unsafe(r):
			b.WriteRune(Replacement)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isSafe reports whether Line would return s unchanged.
func isSafe(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\t' || r == '\n' || r == '\r' || unsafe(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafe reports whether r is a control character, a bidirectional
// control, or a line or paragraph separator.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f: // C0, DEL, C1
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // ALM, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separator
		return true
	}
	return false
}
