package classify

import "strings"

// Claude Code's prompt box (docs/agents/claude.md §7.3), as a terminal
// shows it: the ruled prompt of readRuledPrompt. The empty prompt shows a
// placeholder; the caret then sits right after the mark. Vim mode (NORMAL
// or INSERT) draws the same box, its mode below it; a bracketed paste is
// inserted literally in both modes. Screens captured from the real CLI are
// in testdata/claude/screens.

// claudePlaceholders are what Claude Code shows in an empty prompt.
var claudePlaceholders = []string{
	"Resend your message to try again",
	"Type your message while the session is set up",
}

// readClaudeComposer reads the lowest prompt box on screen.
func readClaudeComposer(screen string, caret Caret) Composer {
	return readRuledPrompt(screen, caret, claudePlaceholders)
}

// The ruled prompt Claude Code and GitHub Copilot CLI draw (their marks
// compared as cells, so GNU screen's hardcopy reads too): a full-width
// rule, the prompt mark "❯" and a space (Claude: a no-break space) before
// the first line, two spaces before each further line, a rule below.
const (
	ruledPromptMark = "❯ "
	ruledIndent     = 2
)

// readRuledPrompt reads the lowest ruled prompt on screen; a draft that is
// one of placeholders, with the caret at the mark or unknown, is empty.
func readRuledPrompt(screen string, caret Caret, placeholders []string) Composer {
	lines := screenLines(screen)
	bottom := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if isRule(lines[i], '─') {
			bottom = i
			break
		}
	}
	top := -1
	for i := bottom - 1; i >= 0; i-- {
		if isRule(lines[i], '─') {
			top = i
			break
		}
	}
	if top < 0 || bottom-top < 2 {
		return Composer{}
	}
	first, ok := startsWith(lines[top+1], strings.TrimSpace(ruledPromptMark))
	if !ok {
		return Composer{}
	}
	body := make([]string, 0, bottom-top-1)
	body = append(body, cutIndent(first, 1))
	for _, l := range lines[top+2 : bottom] {
		body = append(body, cutIndent(l, ruledIndent))
	}
	c := Composer{Seen: true, Draft: draftOf(body)}
	atMark := caret.Known && caret.Row == top+1 && caret.Col == len([]rune(ruledPromptMark))
	switch {
	case c.Draft == "" && caret.Known && caret.Row == top+1 && caret.Col > len([]rune(ruledPromptMark)):
		// Spaces only: the caret stands after them.
		c.Draft = strings.Repeat(" ", caret.Col-len([]rune(ruledPromptMark)))
	case len(placeholders) > 0 && (atMark || !caret.Known) && isPlaceholder(c.Draft, placeholders):
		c.Draft = ""
	case pastedLabel(c.Draft):
		c.Draft, c.Pasted = "", true
	}
	return c
}

// isPlaceholder tells whether draft is one of an agent's placeholders, or
// an example prompt it offers as one (`Try "…"`).
func isPlaceholder(draft string, placeholders []string) bool {
	d := cells(strings.TrimSpace(draft))
	for _, p := range placeholders {
		if d == cells(p) {
			return true
		}
	}
	return strings.HasPrefix(d, `Try "`) && strings.HasSuffix(d, `"`) && !strings.Contains(d, "\n")
}
