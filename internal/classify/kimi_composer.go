package classify

import "strings"

// Kimi Code's prompt box (docs/agents/kimi.md A9; its marks compared as
// cells, so GNU screen's hardcopy reads too): a rounded frame,
// "│ > " before the first line, "│   " before each further line, the
// frame's right edge after the padding. The empty prompt shows nothing.
// The frame pads every line with spaces, so a draft of only spaces cannot
// be told from an empty prompt. Screens captured from the real CLI are in
// testdata/kimi/screens.
const kimiPromptMark = "> "

// readKimiComposer reads the lowest prompt box on screen.
func readKimiComposer(screen string, _ Caret) Composer {
	lines := screenLines(screen)
	bottom := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if isCorner(lines[i], "╰", "╯") {
			bottom = i
			break
		}
	}
	top := -1
	for i := bottom - 1; i >= 0; i-- {
		if isCorner(lines[i], "╭", "╮") {
			top = i
			break
		}
	}
	if top < 0 || bottom-top < 2 {
		return Composer{}
	}
	body := make([]string, 0, bottom-top-1)
	for n, l := range lines[top+1 : bottom] {
		inner, ok := framed(l)
		if !ok {
			return Composer{}
		}
		inner = cutIndent(inner, 1)
		if n == 0 {
			var mark bool
			if inner, mark = strings.CutPrefix(inner, kimiPromptMark); !mark && strings.TrimRight(inner, " ") != ">" {
				return Composer{}
			}
		} else {
			inner = cutIndent(inner, len(kimiPromptMark))
		}
		body = append(body, inner)
	}
	c := Composer{Seen: true, Draft: draftOf(body)}
	if c.Draft == ">" {
		c.Draft = ""
	}
	if pastedLabel(c.Draft) {
		c.Draft, c.Pasted = "", true
	}
	return c
}

// framed is what lies between a line's "│" edges.
func framed(line string) (string, bool) {
	inner, ok := startsWith(strings.TrimSpace(line), "│")
	if !ok {
		return "", false
	}
	return endsWith(inner, "│")
}
