package classify

import "strings"

// Gemini CLI's prompt (docs/agents/gemini.md §7; its marks compared as
// cells, so GNU screen's hardcopy reads too): below a full-width rule and
// the line of its edit mode, " > " before the first line, three spaces
// before each further line, then the footer, whose lines start with one
// space. The empty prompt shows a placeholder. A dialog (a quota or
// overload choice, an approval) takes the prompt's place. Screens captured
// from the real CLI are in testdata/gemini/screens.
const (
	geminiPromptMark = " > "
	geminiIndent     = 3
)

// geminiPlaceholders are what Gemini CLI shows in an empty prompt.
var geminiPlaceholders = []string{"Type your message or @path/to/file"}

// readGeminiComposer reads the prompt below the lowest rule on screen.
func readGeminiComposer(screen string, _ Caret) Composer {
	lines := screenLines(screen)
	rule := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if isRule(lines[i], '─') {
			rule = i
			break
		}
	}
	if rule < 0 {
		return Composer{}
	}
	for i := rule + 1; i < len(lines) && i <= rule+5; i++ {
		first, ok := startsWith(lines[i], geminiPromptMark)
		if !ok {
			continue
		}
		body := []string{first}
		for _, l := range lines[i+1:] {
			rest, ok := startsWith(l, strings.Repeat(" ", geminiIndent))
			if !ok || strings.TrimSpace(rest) == "" || strings.HasPrefix(rest, " ") {
				break
			}
			body = append(body, rest)
		}
		c := Composer{Seen: true, Draft: draftOf(body)}
		switch {
		case isPlaceholder(strings.TrimLeft(c.Draft, " "), geminiPlaceholders):
			c.Draft = ""
		case pastedLabel(c.Draft):
			c.Draft, c.Pasted = "", true
		}
		return c
	}
	return Composer{}
}
