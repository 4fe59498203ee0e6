// Package tray is nudge's menu-bar icon: a thin view of the daemon's state
// with the toggles, the watched sessions, "Open Inbox…", "Pause" and
// "Quit". It holds no rules of its own; every click goes to the daemon.
//
// Only this package imports fyne.io/systray (docs/platform.md §2): a darwin
// build without cgo gets tray_stub.go, where Run returns ErrUnavailable.
package tray

import (
	"context"
	"errors"
	"log/slog"

	"nudge/internal/status"
)

// ErrUnavailable means the icon cannot be shown here (no display, no
// session bus, or a build without tray support); the daemon runs headless.
var ErrUnavailable = errors.New("tray: not available")

// Spec is what the icon needs from the daemon.
type Spec struct {
	// Status is the daemon's current picture.
	Status func() status.Status
	// Changed returns a channel closed at the next change of Status.
	Changed func() <-chan struct{}
	// Change flips toggles and returns the settings now in force.
	Change func(status.SettingsChange) (status.Settings, error)
	// Unread counts the unread Inbox entries and returns a channel closed
	// at the Inbox's next change.
	Unread func(context.Context) (int, <-chan struct{}, error)
	// ContinueAll continues the sessions waiting for a provider's outage
	// (every provider's when "") now.
	ContinueAll func(provider string) (int, error)
	// OpenInbox shows the Inbox window in the person's browser.
	OpenInbox func() error
	// Quit asks the daemon to stop; Run returns once its ctx ends.
	Quit func()
	// Log receives what the icon cannot do; nil logs nowhere.
	Log *slog.Logger
}

func (s Spec) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
