package classify

import (
	"strings"
	"unicode/utf8"
)

// Composer is what an agent's input prompt holds on a captured screen
// (docs/behaviour.md §3 "The person at the keyboard"). nudge types only
// into a prompt it has seen empty, and presses Enter only when the prompt
// holds exactly its own text.
type Composer struct {
	// Seen: the agent's input prompt is on the screen. When false nothing
	// is known of what it holds.
	Seen bool
	// Draft is the text in the prompt, without the agent's frame, prompt
	// mark, placeholder and the indentation it wraps lines with; lines
	// joined by "\n". A draft of only spaces reads as those spaces; "" is
	// an empty prompt.
	Draft string
	// Pasted: the prompt shows only the agent's label for a pasted block
	// ("[Pasted text #1 +3 lines]"), which stands for text not shown.
	Pasted bool
}

// Empty tells whether the prompt was seen and holds nothing.
func (c Composer) Empty() bool { return c.Seen && c.Draft == "" && !c.Pasted }

// Holds tells whether the prompt holds text and nothing else, as the agent
// shows it: the same words in the same order (an agent wraps and
// re-indents), no text before them, or only the agent's label for a paste,
// which nudge may see after pasting text into a prompt it saw empty.
func (c Composer) Holds(text string) bool {
	if !c.Seen {
		return false
	}
	if c.Pasted {
		return true
	}
	return !strings.HasPrefix(c.Draft, " ") && cells(strings.Join(strings.Fields(c.Draft), " ")) == cells(strings.Join(strings.Fields(text), " "))
}

// cells is s as a terminal that keeps one byte per cell shows it: the low
// byte of each character (GNU screen's hardcopy, docs/platform.md §7).
// The readers compare an agent's marks as cells, so one reading serves
// every terminal; on a terminal that keeps whole characters the marks
// still differ from text.
func cells(s string) string {
	return strings.Map(func(r rune) rune { return r & 0xff }, s)
}

// startsWith tells whether line starts with mark, compared as cells, and
// returns the rest of line after it.
func startsWith(line, mark string) (string, bool) {
	n := utf8.RuneCountInString(mark)
	r := []rune(line)
	if len(r) < n || cells(string(r[:n])) != cells(mark) {
		return line, false
	}
	return string(r[n:]), true
}

// endsWith is startsWith at the end of line.
func endsWith(line, mark string) (string, bool) {
	n := utf8.RuneCountInString(mark)
	r := []rune(line)
	if len(r) < n || cells(string(r[len(r)-n:])) != cells(mark) {
		return line, false
	}
	return string(r[:len(r)-n]), true
}

// Caret is where a terminal's cursor sits on a captured screen, 0-based
// from the top left; Known is false where the terminal does not tell.
type Caret struct {
	Row, Col int
	Known    bool
}

// screenLines splits a captured screen into lines, with the no-break space
// some agents draw after their prompt mark read as a space.
func screenLines(screen string) []string {
	return strings.Split(strings.ReplaceAll(screen, "\u00a0", " "), "\n")
}

// draftOf joins the body lines of a prompt, each trimmed on the right
// (terminals pad lines), the empty lines at the end dropped.
func draftOf(lines []string) string {
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// cutIndent removes up to n leading spaces from line.
func cutIndent(line string, n int) string {
	for i := 0; i < n && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	return line
}

// isRule tells whether line is a horizontal rule of at least 8 cells of r.
func isRule(line string, r rune) bool {
	line = strings.TrimRight(line, " ")
	return utf8.RuneCountInString(line) >= 8 && strings.Trim(cells(line), cells(string(r))) == ""
}

// isCorner tells whether line is a frame's edge: the corner left, a rule,
// the corner right.
func isCorner(line, left, right string) bool {
	rest, ok := startsWith(strings.TrimSpace(line), left)
	if !ok {
		return false
	}
	rest, ok = endsWith(rest, right)
	return ok && isRule(rest, '─')
}

// pastedLabel tells whether draft is only an agent's label for pasted
// text, "[Pasted text #1]" or "[Pasted text #1 +12 lines]".
func pastedLabel(draft string) bool {
	d := strings.TrimSpace(draft)
	rest, ok := strings.CutPrefix(d, "[Pasted text #")
	if !ok || !strings.HasSuffix(rest, "]") || strings.Count(d, "[") != 1 {
		return false
	}
	n, more, _ := strings.Cut(strings.TrimSuffix(rest, "]"), " ")
	if n == "" || strings.Trim(n, "0123456789") != "" {
		return false
	}
	lines, ok := strings.CutPrefix(more, "+")
	return more == "" || ok && strings.HasSuffix(lines, " lines") && strings.Trim(strings.TrimSuffix(lines, " lines"), "0123456789") == ""
}
