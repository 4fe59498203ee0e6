// Package security runs the real nudge binary against the attackers of
// docs/security.md: another local user, a listener on a port nudge used
// before it crashed, slow, idle or many clients of the Inbox window, names
// swapped in an agent's folder, an agent's host that never answers, and
// the text of an agent's own records, in the terminal and through MCP.
package security

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/e2e/snoop"
	"nudge/internal/inbox"
	"nudge/internal/web"
)

func TestMain(m *testing.M) { daemontest.Main(m, snoop.Cmd, floodCmd) }

// world is a home with nudge's data folder in it.
type world struct {
	t    *testing.T
	home string
	data string
	env  []string
}

func newWorld(t *testing.T, env ...string) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, home: filepath.Join(dir, "home"), data: filepath.Join(dir, "data")}
	must(t, os.MkdirAll(w.home, 0o700))
	w.env = daemontest.Env(w.home, w.data, env...)
	return w
}

func (w *world) start() *daemontest.Daemon {
	w.t.Helper()
	d := daemontest.Start(w.t, w.env, "run", "--headless")
	d.WaitReady(w.t)
	return d
}

func (w *world) nudge(args ...string) ([]byte, error) { return daemontest.CLI(w.env, args...) }

// pageAddress is the running Inbox window's address, from a sign-in link
// the daemon gives over its control socket.
func (w *world) pageAddress() string {
	w.t.Helper()
	out, err := w.nudge("inbox", "--url")
	must(w.t, err)
	link := strings.TrimSpace(string(out))
	i := strings.Index(link, "#launch=")
	if !strings.HasPrefix(link, "http://127.0.0.1:") || i < 0 {
		w.t.Fatalf("nudge inbox --url: %q", link)
	}
	return link[:i]
}

// secret is the secret of the daemon's run, as other tools read it.
func (w *world) secret() string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.data, "web.secret"))
	must(w.t, err)
	return strings.TrimSpace(string(b))
}

func (w *world) entries() []web.Entry { return daemontest.Entries(w.t, w.env) }

// signInFailure writes a Claude Code transcript whose turn dies because
// the API key was refused (docs/agents/claude.md §4.2), in folder cwd with the
// provider's error text: nudge tells the person at once.
func (w *world) signInFailure(session, cwd, errorText string) {
	w.t.Helper()
	project := filepath.Join(w.home, ".claude", "projects", "-work-shop")
	must(w.t, os.MkdirAll(project, 0o700))
	now := time.Now().UTC()
	common := func(rec map[string]any, i int) map[string]any {
		rec["sessionId"], rec["cwd"], rec["isSidechain"], rec["version"] = session, cwd, false, "2.1.332"
		rec["timestamp"] = now.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		rec["uuid"] = fmt.Sprintf("security-%s-%d", session, i)
		return rec
	}
	lines := []map[string]any{
		common(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "build the shop"},
			"origin": map[string]any{"kind": "human"}, "promptSource": "typed", "turnOrigin": "human"}, 0),
		common(map[string]any{"type": "assistant", "isApiErrorMessage": true, "error": "authentication_failed", "apiErrorStatus": 401,
			"message": map[string]any{"model": "<synthetic>", "role": "assistant", "stop_reason": "stop_sequence", "stop_sequence": "",
				"content": []any{map[string]any{"type": "text", "text": errorText}}}}, 1),
	}
	var buf bytes.Buffer
	for _, l := range lines {
		b, err := json.Marshal(l)
		must(w.t, err)
		buf.Write(append(b, '\n'))
	}
	must(w.t, os.WriteFile(filepath.Join(project, session+".jsonl"), buf.Bytes(), 0o600))
}

// seed writes an Inbox entry straight into the database.
func (w *world) seed(e inbox.EntryRow) {
	w.t.Helper()
	db, err := inbox.Open(filepath.Join(w.data, "nudge.db"))
	must(w.t, err)
	defer db.Close()
	must(w.t, db.Commit(context.Background(), inbox.Batch{Entries: []inbox.EntryRow{e}}))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
