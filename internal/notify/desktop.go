package notify

import (
	"html"
	"strconv"
	"strings"

	"nudge/internal/safetext"
)

// desktopText makes s, which may come from an agent's records, safe for a
// desktop notification: one plain line (safetext.Line) of printable
// characters only — macOS's AppleScript fallback gets the text quoted the
// Go way, which spells anything else as an escape AppleScript does not
// read —, never starting with "-", which the Linux fallbacks' command
// lines (notify-send TITLE BODY, kdialog) would take for an option, and,
// for a server that renders markup in bodies, with & < > and quotes
// escaped.
func desktopText(s string, markup bool) string {
	s = strings.Map(func(r rune) rune {
		if r != ' ' && !strconv.IsPrint(r) {
			return safetext.Replacement
		}
		return r
	}, safetext.Line(s))
	if strings.HasPrefix(s, "-") {
		s = " " + s
	}
	if markup {
		s = html.EscapeString(s)
	}
	return s
}
