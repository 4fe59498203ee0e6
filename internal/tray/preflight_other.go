//go:build !linux

package tray

// preflight has nothing to check outside Linux: the menu bar is always there.
func preflight() error { return nil }
