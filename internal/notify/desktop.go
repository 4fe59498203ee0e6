package notify

import (
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/gen2brain/beeep"

	"nudge/internal/safetext"
)

// desktop shows messages as desktop notifications (beeep).
type desktop struct{}

// send shows m on the desktop, giving up on waiting after desktopTimeout.
func (desktop) send(n *Notifier, m Message, _ time.Time) {
	done := make(chan error, 1)
	go func() { done <- beeep.Notify(desktopText(m.Title, false), desktopText(m.Body, bodyMarkup()), "") }()
	select {
	case err := <-done:
		if err != nil {
			n.desktopFailure(m, err)
		}
	case <-time.After(desktopTimeout):
		n.desktopFailure(m, fmt.Errorf("no answer within %s", desktopTimeout))
	case <-n.ctx.Done():
		n.log.Warn("desktop notification abandoned at shutdown", "title", m.Title)
	}
}

// desktopFailure logs a desktop notification that could not be shown: the
// first one of a run as one warning that says what to do, the later ones
// at DEBUG. On a machine without a notification server (a headless one),
// every notification fails the same way.
func (n *Notifier) desktopFailure(m Message, err error) {
	n.log.Debug("desktop notification not shown", "title", m.Title, "err", err)
	if n.desktopFailed.Swap(true) {
		return
	}
	if n.cfg.NtfyURL != "" || n.cfg.WebhookURL != "" {
		n.log.Warn("desktop notifications cannot be shown here; nudge tells you through the phone push alone")
		return
	}
	n.log.Warn("desktop notifications cannot be shown here; set notify.ntfy.url to an ntfy topic to be told on your phone instead")
}

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
