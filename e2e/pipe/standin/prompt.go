package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// prompt is the stand-in's input prompt on a terminal: Claude Code's box
// (docs/agents/claude.md §7.3), a rule, "❯" and a no-break space before
// the first line, two spaces before each further one, a rule below, the
// cursor after the text. It takes keys in raw mode as the real CLI does:
// Backspace, Ctrl-U and Ctrl-C edit or clear it, Enter sends it, escape
// sequences (a bracketed paste's marks among them) are not text.
type prompt struct {
	out   io.Writer
	in    *bufio.Reader
	text  []rune
	drawn int // the lines the box took when last drawn, above the cursor's line
}

// onTerminal tells whether stdin is a terminal; the stand-in then draws
// its prompt, else it reads lines.
func onTerminal() bool {
	fi, err := os.Stdin.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newPrompt puts the terminal in raw mode and draws the empty prompt; a
// character device that is no terminal (/dev/null) refuses raw mode.
func newPrompt() (*prompt, error) {
	raw := exec.Command("stty", "raw", "-echo")
	raw.Stdin = os.Stdin
	if err := raw.Run(); err != nil {
		return nil, err
	}
	p := &prompt{out: os.Stdout, in: bufio.NewReader(os.Stdin)}
	p.draw()
	return p, nil
}

// width is the terminal's width in cells.
func width() int {
	ws, err := unix.IoctlGetWinsize(int(os.Stdin.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col < 10 {
		return 80
	}
	return int(ws.Col)
}

// line reads keys until Enter and returns what the prompt held; the sent
// line stays above a new, empty prompt.
func (p *prompt) line() (string, error) {
	for {
		b, err := p.in.ReadByte()
		if err != nil {
			return "", err
		}
		switch {
		case b == '\r' || b == '\n':
			line := string(p.text)
			p.text = p.text[:0]
			p.clear()
			fmt.Fprintf(p.out, "❯ %s\r\n", line)
			p.drawn = 0
			p.draw()
			return line, nil
		case b == 0x7f || b == 0x08:
			if len(p.text) > 0 {
				p.text = p.text[:len(p.text)-1]
			}
		case b == 0x15 || b == 0x03:
			p.text = p.text[:0]
		case b == 0x1b:
			p.skipEscape()
			continue
		case b < 0x20:
			continue
		default:
			_ = p.in.UnreadByte()
			r, _, err := p.in.ReadRune()
			if err != nil {
				return "", err
			}
			if r != utf8.RuneError {
				p.text = append(p.text, r)
			}
		}
		p.draw()
	}
}

// skipEscape reads past an escape sequence: ESC [ parameters final byte.
func (p *prompt) skipEscape() {
	b, err := p.in.ReadByte()
	if err != nil || b != '[' {
		return
	}
	for {
		b, err := p.in.ReadByte()
		if err != nil || b >= 0x40 && b <= 0x7e {
			return
		}
	}
}

// clear moves to the box's first line and erases it and all below.
func (p *prompt) clear() {
	if p.drawn > 0 {
		fmt.Fprintf(p.out, "\x1b[%dA", p.drawn)
	}
	fmt.Fprint(p.out, "\r\x1b[J")
}

// draw draws the box anew, the text wrapped to the terminal's width, and
// leaves the cursor after the text.
func (p *prompt) draw() {
	w := width()
	p.clear()
	rows := wrapRows(p.text, w-2)
	var b strings.Builder
	b.WriteString(strings.Repeat("─", w) + "\r\n")
	for i, r := range rows {
		lead := "  "
		if i == 0 {
			lead = "❯\u00a0"
		}
		b.WriteString(lead + string(r) + "\r\n")
	}
	b.WriteString(strings.Repeat("─", w))
	// Back to the end of the text: up past the rule, then to its column.
	fmt.Fprintf(&b, "\x1b[1A\r\x1b[%dC", 2+len(rows[len(rows)-1]))
	fmt.Fprint(p.out, b.String())
	p.drawn = len(rows)
}

// wrapRows cuts text into rows of at most n characters, at least one.
func wrapRows(text []rune, n int) [][]rune {
	rows := [][]rune{}
	for len(text) > n {
		rows = append(rows, text[:n])
		text = text[n:]
	}
	return append(rows, text)
}
