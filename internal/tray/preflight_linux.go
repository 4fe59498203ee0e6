//go:build linux

package tray

import (
	"fmt"
	"os"

	"github.com/godbus/dbus/v5"
)

// preflight checks for a graphical session and its bus before systray
// starts: without a session bus systray.Quit panics (docs/platform.md §3, bug 2).
func preflight() error {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return fmt.Errorf("%w: no display (DISPLAY and WAYLAND_DISPLAY are unset)", ErrUnavailable)
	}
	if _, err := dbus.SessionBus(); err != nil {
		return fmt.Errorf("%w: no DBus session bus: %w", ErrUnavailable, err)
	}
	return nil
}
