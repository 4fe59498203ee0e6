//go:build !linux

package inject

import "fmt"

// processArgs cannot read another process's exact command line here.
func processArgs(pid int) ([]string, error) {
	return nil, fmt.Errorf("the command line of pid %d cannot be read on this system", pid)
}
