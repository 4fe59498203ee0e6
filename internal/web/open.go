package web

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

// ErrCannotOpen means no browser can be opened from here: no display, or
// no program that opens one.
var ErrCannotOpen = errors.New("cannot open a browser here")

// opener is the program that opens a file in the person's default browser.
func opener() string {
	if runtime.GOOS == "darwin" {
		return "open"
	}
	return "xdg-open"
}

// CanOpen says whether OpenWindow can show a browser here: on Linux it
// needs a display, and on every system its opener.
func CanOpen() error {
	if runtime.GOOS != "darwin" && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return fmt.Errorf("%w: there is no display (DISPLAY and WAYLAND_DISPLAY are unset)", ErrCannotOpen)
	}
	if _, err := exec.LookPath(opener()); err != nil {
		return fmt.Errorf("%w: %s is not installed", ErrCannotOpen, opener())
	}
	return nil
}

// OpenWindow shows the Inbox window in the person's default browser with
// the one-time sign-in link launchURL (Server.LaunchURL), handed over
// through a user-only launcher page so that it never appears on a
// command line. The opener runs without a shell.
func OpenWindow(dataDir, launchURL string) error {
	if err := CanOpen(); err != nil {
		return err
	}
	launcher, err := writeLauncher(dataDir, launchURL)
	if err != nil {
		return err
	}
	cmd := exec.Command(opener(), launcher)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("open the Inbox window with %s: %w", opener(), err)
	}
	go func() { _ = cmd.Wait() }() // reap the opener
	return nil
}
