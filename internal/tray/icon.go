package tray

import (
	"sync"

	"nudge/internal/icon"
)

// iconSize is the menu-bar icons' edge in pixels; hosts scale them to the bar.
const iconSize = 32

// trayIcon is one look's pair: a black + alpha template that macOS tints for
// light and dark bars, and a colour picture that Linux shows.
type trayIcon struct{ template, colour []byte }

// icons holds the pictures of every look, drawn the first time the icon is
// shown: a daemon without a menu bar never draws them.
var icons = sync.OnceValue(func() map[look]trayIcon {
	return map[look]trayIcon{
		allFine:        {icon.Template(icon.AllFine, iconSize), icon.Colour(icon.AllFine, iconSize)},
		retrying:       {icon.Template(icon.Retrying, iconSize), icon.Colour(icon.Retrying, iconSize)},
		needsAttention: {icon.Template(icon.NeedsAttention, iconSize), icon.Colour(icon.NeedsAttention, iconSize)},
	}
})
