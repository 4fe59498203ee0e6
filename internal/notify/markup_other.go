//go:build !darwin

package notify

import (
	"context"
	"slices"
	"time"

	"github.com/godbus/dbus/v5"
)

// markupWait bounds asking the notification server what it can do.
const markupWait = 2 * time.Second

// bodyMarkup reports whether the freedesktop notification server renders
// markup in bodies (its "body-markup" capability). When it cannot be
// asked, the answer is yes: the fallbacks (notify-send, kdialog) may
// render markup, and escaped text is merely shown with its entities.
func bodyMarkup() bool {
	conn, err := dbus.SessionBus()
	if err != nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), markupWait)
	defer cancel()
	var caps []string
	err = conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications").
		CallWithContext(ctx, "org.freedesktop.Notifications.GetCapabilities", 0).Store(&caps)
	return err != nil || slices.Contains(caps, "body-markup")
}
