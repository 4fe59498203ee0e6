package web

import (
	"fmt"
	"os/exec"
	"runtime"
)

// OpenWindow shows the Inbox window in the person's default browser through
// the user-only launcher page, so the secret never appears on a command
// line. The opener runs without a shell.
func OpenWindow(dataDir string) error {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	cmd := exec.Command(opener, Launcher(dataDir))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("open the Inbox window with %s: %w", opener, err)
	}
	go func() { _ = cmd.Wait() }() // reap the opener
	return nil
}
