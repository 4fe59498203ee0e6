package tray

import (
	"sync"

	"nudge/internal/icon"
	"nudge/internal/status"
)

// iconSize is the menu-bar icons' edge in pixels; hosts scale them to the bar.
const iconSize = 32

// trayIcon is one look's pair: a black + alpha template that macOS tints for
// light and dark bars, and a colour picture that Linux shows.
type trayIcon struct{ template, colour []byte }

// icons holds the pictures of every look, drawn the first time the icon is
// shown: a daemon without a menu bar never draws them.
var icons = sync.OnceValue(func() map[status.Look]trayIcon {
	return map[status.Look]trayIcon{
		status.AllFine:        {icon.Template(icon.AllFine, iconSize), icon.Colour(icon.AllFine, iconSize)},
		status.Retrying:       {icon.Template(icon.Retrying, iconSize), icon.Colour(icon.Retrying, iconSize)},
		status.NeedsAttention: {icon.Template(icon.NeedsAttention, iconSize), icon.Colour(icon.NeedsAttention, iconSize)},
	}
})
