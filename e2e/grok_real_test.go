//go:build linux

package e2e

import (
	"context"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/fakechat"
)

// grokLegacyCLI is the Grok CLI published as @vibe-kit/grok-cli, the only
// Grok on npm here: grok-dev, which has the hooks nudge reads, is not
// published (docs/agents/grok.md §1, §5).
var grokLegacyCLI = agentCLI{name: "Grok CLI (@vibe-kit)", env: "NUDGE_E2E_GROK_LEGACY", install: "grok", version: "0.0.34",
	bin: filepath.Join("node_modules", ".bin", "grok")}

// TestRealGrokLegacyLeavesNothing: a turn of @vibe-kit/grok-cli killed by a
// 500 (after the OpenAI SDK's own two retries) ends with the "Sorry, I
// encountered an error" line on screen and nothing on disk, so nudge has
// nothing to read: no session, no Inbox entry, and no turn called
// finished. Should a release start writing sessions, this test says so.
func TestRealGrokLegacyLeavesNothing(t *testing.T) {
	grok := grokLegacyCLI.need(t)
	w := newWorld(t)
	srv, baseURL := serveFake(w, fakechat.New, []string{"500", "500", "500"})
	d := w.startDaemon()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, grok, "-p", "hello")
	cmd.Dir = w.project
	cmd.Env = append(w.baseEnv(), "GROK_API_KEY=sk-fake", "GROK_BASE_URL="+baseURL+"/v1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("grok -p: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Sorry, I encountered an error") || !strings.Contains(string(out), "500") {
		t.Fatalf("grok -p printed no error for the 500:\n%s", out)
	}
	if main := srv.Main(); len(main) != 3 {
		t.Errorf("main requests = %+v, want the first and the SDK's two retries", main)
	}

	var written []string
	filepath.WalkDir(w.home, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.Contains(path, "grok") {
			written = append(written, path)
		}
		return nil
	})
	if len(written) > 0 {
		t.Errorf("grok wrote %q: a session record nudge could read (update docs/agents/grok.md)", written)
	}
	time.Sleep(2 * time.Second) // a rescan and more
	if es := d.inbox(); len(es) != 0 {
		t.Errorf("inbox = %+v, want nothing: nudge cannot see this Grok", es)
	}
	if st := d.cli("status", "--json"); strings.Contains(st, `"grok"`) {
		t.Errorf("status shows a Grok session:\n%s", st)
	}
}
