package classify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Screens captured with `tmux capture-pane -p` from Codex CLI 0.171.0 (and
// 0.98.0 where the name says so) in a 200x50 pane (testdata/codex/screens).
func TestCodexScreenReady(t *testing.T) {
	cases := map[string]string{
		"idle.txt":                    "",
		"idle-after-error-0.98.0.txt": "",
		"idle-after-cancel.txt":       "",
		"idle-after-error.txt":        "",
		"idle-after-answer.txt":       "",
		"working.txt":                 "a turn is running",
		"approval.txt":                "approval or question",
		"startup-model-modal.txt":     "a menu is open",
		// A draft is the composer reading's to tell (TestReadComposer).
		"typed-not-sent.txt": "",
	}
	files, err := filepath.Glob(filepath.Join("testdata", "codex", "screens", "*.txt"))
	if err != nil || len(files) != len(cases) {
		t.Fatalf("screens = %v (%v), want %d", files, err, len(cases))
	}
	ready := codexAgent(t).ScreenReady
	for name, want := range cases {
		screen, err := os.ReadFile(filepath.Join("testdata", "codex", "screens", name))
		if err != nil {
			t.Fatal(err)
		}
		err = ready(string(screen))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want ready", name, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want an error about %q", name, err, want)
		}
	}
	if err := ready(""); err == nil {
		t.Error("an empty screen reads as ready")
	}
}
