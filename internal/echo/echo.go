// Package echo tells when a terminal application has drawn a text typed
// into it. A delivery presses Enter only then: an application that reads
// the text and the Enter in one piece can take the Enter as part of a
// paste and leave the text unsent (docs/platform.md §7).
package echo

import (
	"bytes"
	"strings"
	"time"
)

// Wait bounds how long a delivery waits for its text to show before it
// presses Enter all the same.
const Wait = 5 * time.Second

// probeLen is how many of a text's last letters and digits are looked for.
const probeLen = 32

// Probe is what a screen is searched for to tell that a typed text was
// drawn: the text's last ASCII letters and digits. Screens differ in
// everything else (wrapping, indentation, non-breaking spaces, GNU
// screen's one byte per cell), and the end of a text is drawn only once
// all of it was read. A text without ASCII letters or digits has an empty
// probe, which no screen shows.
type Probe string

// Of is the probe of text.
func Of(text string) Probe {
	b := squeeze(nil, []byte(text))
	return Probe(b[max(len(b)-probeLen, 0):])
}

// In counts how often screen shows p.
func (p Probe) In(screen string) int {
	if p == "" {
		return 0
	}
	return strings.Count(string(squeeze(nil, []byte(screen))), string(p))
}

// Stream looks for p in a terminal's drawn output, given piece by piece
// (control sequences already taken out). The empty probe is seen in any
// drawn output: a text without letters or digits shows as some change.
type Stream struct {
	p    Probe
	tail []byte // the squeezed output since the last check, up to len(p)-1 bytes kept
	seen bool
}

// NewStream looks for p in output from now on.
func NewStream(p Probe) *Stream { return &Stream{p: p} }

// Write takes drawn output and reports whether p has been seen in all the
// output so far.
func (s *Stream) Write(drawn []byte) bool {
	if s.seen || s.p == "" {
		s.seen = s.seen || len(drawn) > 0
		return s.seen
	}
	s.tail = squeeze(s.tail, drawn)
	if bytes.Contains(s.tail, []byte(s.p)) {
		s.seen, s.tail = true, nil
		return true
	}
	if keep := len(s.p) - 1; len(s.tail) > keep {
		s.tail = append(s.tail[:0], s.tail[len(s.tail)-keep:]...)
	}
	return false
}

// squeeze appends b's ASCII letters and digits to dst.
func squeeze(dst, b []byte) []byte {
	for _, c := range b {
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			dst = append(dst, c)
		}
	}
	return dst
}
