package inbox

import (
	"os"
	"path/filepath"
	"runtime"
)

// DefaultPath is where the database lives: $NUDGE_DATA_DIR/nudge.db, else
// nudge.db in the platform's data folder (Linux: $XDG_DATA_HOME/nudge or
// ~/.local/share/nudge; macOS: ~/Library/Application Support/nudge).
func DefaultPath() string {
	return filepath.Join(dataDir(), "nudge.db")
}

func dataDir() string {
	if d := os.Getenv("NUDGE_DATA_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "." // no home: the working directory, rather than nowhere
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "nudge")
	case "windows":
		if d, err := os.UserCacheDir(); err == nil { // %LocalAppData%
			return filepath.Join(d, "nudge")
		}
		return filepath.Join(home, "nudge")
	}
	// XDG: a relative XDG_DATA_HOME is invalid and ignored.
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "nudge")
	}
	return filepath.Join(home, ".local", "share", "nudge")
}
