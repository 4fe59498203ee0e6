package web

import (
	"fmt"
	"os/exec"
	"runtime"
)

// OpenWindow shows the Inbox window in the person's default browser with
// the one-time sign-in link launchURL (Server.LaunchURL), handed over
// through a user-only launcher page so that it never appears on a
// command line. The opener runs without a shell.
func OpenWindow(dataDir, launchURL string) error {
	launcher, err := writeLauncher(dataDir, launchURL)
	if err != nil {
		return err
	}
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	cmd := exec.Command(opener, launcher)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("open the Inbox window with %s: %w", opener, err)
	}
	go func() { _ = cmd.Wait() }() // reap the opener
	return nil
}
