package config

import (
	"path/filepath"
	"runtime"
	"testing"
)

// The data folder: $NUDGE_DATA_DIR, else the platform's data folder (on
// Linux $XDG_DATA_HOME/nudge, else ~/.local/share/nudge). It is the one
// rule: the database, the lock and the socket all live there.
func TestDataDir(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv(EnvDataDir, "/data/x")
	if got := DataDir(); got != "/data/x" {
		t.Errorf("with NUDGE_DATA_DIR: %s", got)
	}
	t.Setenv(EnvDataDir, "")
	t.Setenv("XDG_DATA_HOME", "/xdg")
	want := map[string]string{"linux": "/xdg/nudge", "darwin": filepath.Join("/home/u", "Library", "Application Support", "nudge")}
	if w, ok := want[runtime.GOOS]; ok && DataDir() != w {
		t.Errorf("DataDir = %s, want %s", DataDir(), w)
	}
	if runtime.GOOS == "linux" {
		t.Setenv("XDG_DATA_HOME", "")
		if got := DataDir(); got != "/home/u/.local/share/nudge" {
			t.Errorf("without XDG_DATA_HOME: %s", got)
		}
	}
}
