//go:build freebsd || openbsd || netbsd || dragonfly

package watch

import (
	"errors"
	"log/slog"
	"time"
)

// fileEvents: fsnotify's kqueue holds a descriptor per file here
// (docs/platform.md §6), and there is no FSEvents.
const fileEvents = false

// newFolderSource: none on these systems; scans every Rescan find changes.
func newFolderSource([]string, time.Duration, *slog.Logger) (folderSource, error) {
	return nil, errors.ErrUnsupported
}
