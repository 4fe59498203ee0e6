//go:build linux

package processes

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/internal/samples"
)

// A Claude Code transcript whose session id is an option ("--settings=…")
// dies of a 500 with headless resume on: nudge never starts claude with
// that id, and says why in the Inbox; a session with a real id beside it
// is resumed as `claude --resume ID -p -- TEXT`.
func TestSessionIDThatIsAnOptionIsNeverResumed(t *testing.T) {
	m := newMachine(t)
	person := m.me("person")
	project := filepath.Join(person.home, "project")
	m.mkdir(project, person)
	claude := m.recorder("claude")
	d := m.startNudge(person, "inject: {resume: {claude: true}}\n", claude.path())

	const (
		hostile = "--settings=/tmp/nudge-test-settings.json"
		real    = "22222222-2222-4222-8222-222222222222"
	)
	dir := filepath.Join(person.home, ".claude", "projects", "-project")
	m.mkdir(dir, person)
	sample, err := os.ReadFile(samples.Dir("claude", "api500-print-noretry.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for file, id := range map[string]string{"hostile.jsonl": hostile, real + ".jsonl": real} {
		b := bytes.ReplaceAll(sample, []byte("463e32cb-177b-4ddd-a0de-a32a4fd07866"), []byte(id))
		b = bytes.ReplaceAll(b, []byte(`"/home/dev/project"`), []byte(`"`+project+`"`))
		if id == real {
			// Ten seconds after the hostile one, so that of the two failures
			// on one provider (an outage, docs/behaviour.md §9) the hostile
			// one probes first and is refused; the real one probes next.
			b = bytes.ReplaceAll(b, []byte(`"timestamp":"2026-11-30T08:55:5`), []byte(`"timestamp":"2026-11-30T08:56:0`))
		}
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m.chown(dir, person)

	want := strings.Join([]string{"--resume", real, "-p", "--", continuation, "--end--", ""}, "\n")
	eventually(t, "the real session to be resumed", 30*time.Second, func() bool { return claude.text() != "" })
	var told bool
	eventually(t, "the refusal in the Inbox", 30*time.Second, func() bool {
		var entries []struct{ Session, What string }
		json.Unmarshal([]byte(d.cli("inbox", "--json")), &entries)
		for _, e := range entries {
			told = told || e.Session == hostile && contains(e.What, "the session id in its records is not one Claude Code writes", "does not use it")
		}
		return told
	})
	time.Sleep(5 * time.Second) // the later retry delays
	if got := claude.text(); got != want {
		t.Errorf("claude was run with:\n%s\nwant once:\n%s", got, want)
	}
}
