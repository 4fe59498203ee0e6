package daemontest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"nudge/internal/web"
)

// Env is the environment of nudge in a home of its own: HOME, PATH, the data
// folder data, config and state under home, a 1 s rescan and no desktop
// notifications. Entries of extra follow and win over these (the last value
// of a key is the one a program sees).
func Env(home, data string, extra ...string) []string {
	return append([]string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NUDGE_DATA_DIR=" + data,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"NUDGE_NOTIFY_DESKTOP=false", "NUDGE_WATCH_RESCAN=1s",
	}, extra...)
}

// Entries is the Inbox as `nudge inbox --json` prints it.
func Entries(t testing.TB, env []string) []web.Entry {
	t.Helper()
	out, err := CLI(env, "inbox", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var es []web.Entry
	if err := json.Unmarshal(out, &es); err != nil {
		t.Fatalf("nudge inbox --json: %v\n%s", err, out)
	}
	return es
}
