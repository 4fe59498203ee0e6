package wrap

import (
	"bytes"
	"sync/atomic"
)

// Bracketed paste (xterm's DEC private mode 2004): an application that
// switches it on with ESC[?2004h receives pasted text between ESC[200~ and
// ESC[201~, so a TUI takes multi-line text as one paste instead of
// submitting at each newline (docs/platform.md §7); ESC[?2004l switches it off.
var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// pasteMode follows the child's output for the bracketed-paste switch. It
// reads the stream in any chunking: a sequence split across writes counts.
type pasteMode struct {
	on     atomic.Bool
	state  scanState
	params []byte // of the control sequence being read, after "ESC ["
}

type scanState int

const (
	ground  scanState = iota
	escape            // after ESC
	control           // inside ESC [ … up to the final byte
)

// maxParams bounds a control sequence's parameters; a longer one is not a
// mode switch and is dropped.
const maxParams = 64

// Bracketed reports whether the child has bracketed paste switched on.
func (p *pasteMode) Bracketed() bool { return p.on.Load() }

// scan reads a chunk of the child's output and appends to drawn what it
// draws: its bytes outside control sequences. With a nil drawn nothing is
// kept. Only the goroutine copying the output calls it.
func (p *pasteMode) scan(b, drawn []byte) []byte {
	for _, c := range b {
		switch p.state {
		case ground:
			if c == 0x1b {
				p.state = escape
			} else if drawn != nil {
				drawn = append(drawn, c)
			}
		case escape:
			switch c {
			case '[':
				p.state, p.params = control, p.params[:0]
			case 'c': // RIS, full reset: modes back to their defaults
				p.on.Store(false)
				p.state = ground
			case 0x1b:
			default:
				p.state = ground
			}
		case control:
			switch {
			case c == 0x1b:
				p.state = escape
			case c == 0x18 || c == 0x1a: // CAN, SUB cancel the sequence
				p.state = ground
			case c >= 0x40 && c <= 0x7e:
				p.final(c)
				p.state = ground
			case c >= 0x20 && c <= 0x3f:
				if len(p.params) == maxParams {
					p.state = ground
					continue
				}
				p.params = append(p.params, c)
			}
			// other C0 controls inside a sequence are executed, not part of it
		}
	}
	return drawn
}

// final handles a complete control sequence ESC [ params final.
func (p *pasteMode) final(c byte) {
	if c != 'h' && c != 'l' {
		return
	}
	modes, private := bytes.CutPrefix(p.params, []byte("?"))
	if !private {
		return
	}
	for m := range bytes.SplitSeq(modes, []byte(";")) {
		if string(m) == "2004" {
			p.on.Store(c == 'h')
		}
	}
}

// bracket wraps text for a child with bracketed paste on. The markers are
// removed from inside the text (until none is left, as removing one can
// join another), so the text cannot end the paste early and have its rest
// taken as keys.
func bracket(text []byte) []byte {
	for bytes.Contains(text, pasteStart) || bytes.Contains(text, pasteEnd) {
		text = bytes.ReplaceAll(text, pasteStart, nil)
		text = bytes.ReplaceAll(text, pasteEnd, nil)
	}
	out := make([]byte, 0, len(pasteStart)+len(text)+len(pasteEnd))
	out = append(out, pasteStart...)
	out = append(out, text...)
	return append(out, pasteEnd...)
}
