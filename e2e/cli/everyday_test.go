package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/web"
)

// A Claude Code session in /work/shop whose turn dies from a 500, and the
// text the person saw.
const (
	shopSession = "0b5e7c1d-1111-4111-8111-222222222222"
	err500      = "API Error: 500 Internal server error"
)

func (m *machine) deadTurn(session string) {
	m.t.Helper()
	daemontest.Claude(m.t, m.home, "/work/shop", session, daemontest.ClaudePrompt("build the shop"),
		daemontest.ClaudeAPIError("server_error", 500, err500))
}

// start runs the daemon headless with extra settings and waits until it is
// ready; no desktop session is visible to it.
func (m *machine) start(extra ...string) *daemontest.Daemon {
	m.t.Helper()
	env := append(append([]string{}, m.env...), "XDG_RUNTIME_DIR="+m.t.TempDir(), "NUDGE_WEB_ADDR=127.0.0.1:0")
	m.env = append(env, extra...)
	d := daemontest.Start(m.t, m.env, "run", "--headless")
	d.WaitReady(m.t)
	return d
}

// logLine is one line of the daemon's log file.
type logLine struct {
	Level, Msg, Session, What, Events, Backend, Place string
	PID                                               int
}

// logLines reads the daemon's log file.
func (m *machine) logLines() []logLine {
	m.t.Helper()
	var out []logLine
	sc := bufio.NewScanner(strings.NewReader(read(m.t, m.log)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			m.t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if k := repeatedKey(sc.Bytes()); k != "" {
			m.t.Errorf("log line %s names %q twice", sc.Text(), k)
		}
		out = append(out, l)
	}
	return out
}

// repeatedKey is a key that a JSON object's top level has more than once,
// or "".
func repeatedKey(object []byte) string {
	dec := json.NewDecoder(bytes.NewReader(object))
	if _, err := dec.Token(); err != nil { // {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		key, _ := tok.(string)
		if seen[key] {
			return key
		}
		seen[key] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// count is how many log lines at level say msg (about session, when given).
func count(lines []logLine, level, msg, session string) int {
	n := 0
	for _, l := range lines {
		if l.Level == level && l.Msg == msg && (session == "" || l.Session == session) {
			n++
		}
	}
	return n
}

func (m *machine) entries() []web.Entry { return daemontest.Entries(m.t, m.env) }

// A toggle flipped from the CLI is in the status the moment the command
// returns: one read, no waiting.
func TestPauseIsInTheStatusAtOnce(t *testing.T) {
	m := newMachine(t)
	// Before a daemon runs, a toggle says how to flip it.
	for _, cmd := range [][]string{{"pause"}, {"retry", "off"}} {
		if out, err := m.nudge(cmd...); err == nil || !strings.Contains(err.Error(), "exit status 1") || !strings.Contains(err.Error(), "start it with `nudge run`") {
			t.Errorf("nudge %v without a daemon: %v %s; want exit 1 saying to start it", cmd, err, out)
		}
	}
	m.start()
	for _, c := range []struct {
		cmd  string
		want bool
	}{{"pause", true}, {"resume", false}, {"pause", true}} {
		if out, err := m.nudge(c.cmd); err != nil {
			t.Fatalf("nudge %s: %v %s", c.cmd, err, out)
		}
		out, err := m.nudge("status", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Settings struct {
				Paused bool `json:"paused"`
			} `json:"settings"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil || st.Settings.Paused != c.want {
			t.Fatalf("right after nudge %s, status says paused=%v (%v):\n%s", c.cmd, st.Settings.Paused, err, out)
		}
	}
}

// A continuation nudge cannot deliver (no terminal holds the session) is
// told in one plain sentence that says what to do, for the session's own
// agent only: the same words in the Inbox, the status, explain and the
// log; the entry counts the attempt that was made. With log.level debug
// the log follows the session: each record's classification and decision
// as details, one INFO line per change of course, none for sending since no
// terminal was found.
func TestAnUndeliverableContinuationIsToldPlainly(t *testing.T) {
	m := newMachine(t)
	m.start("NUDGE_RETRY_DELAYS=1s,1s,1s", "NUDGE_LOG_LEVEL=debug", "NUDGE_NOTIFY_DESKTOP=false")
	m.deadTurn(shopSession)
	daemontest.Eventually(t, "the Inbox entry", 20*time.Second, func() bool { return len(m.entries()) == 1 })
	e := m.entries()[0]
	what := e.What
	if e.Attempts != 1 || e.ErrorText != err500 {
		t.Errorf("entry %+v: want the one attempt made and the original error", e)
	}
	if !strings.HasSuffix(what, ".") || strings.Contains(what, ". ") || strings.Contains(what, "(") {
		t.Errorf("not one plain sentence: %q", what)
	}
	for _, bad := range []string{"OpenCode", "opencode", "no agent process known", "no terminal found for", "wrap:"} {
		if strings.Contains(what, bad) {
			t.Errorf("%q says %q", what, bad)
		}
	}
	if !strings.Contains(what, "Claude Code") || !strings.Contains(what, "`nudge wrap -- claude`") || !strings.Contains(what, "tmux") {
		t.Errorf("%q does not say how to run Claude Code so that nudge can type into it", what)
	}

	out, err := m.nudge("status", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Sessions []struct{ State, Note string }
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.Sessions) != 1 || st.Sessions[0].State != "gave_up" || st.Sessions[0].Note != what {
		t.Errorf("status --json: %v\n%s", err, out)
	}
	if out, err := m.nudge("status"); err != nil || !strings.Contains(out, "gave up — "+what) || strings.Contains(out, "gave_up") {
		t.Errorf("status: %v\n%s", err, out)
	}
	out, err = m.nudge("explain", "0b5e7c1d")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "— now gave up\n") || strings.Contains(out, "gave_up") || !strings.Contains(out, "continuation 1 not delivered: "+what) ||
		!strings.Contains(out, "turn failed: provider error") {
		t.Errorf("explain does not tell it in words:\n%s", out)
	}

	lines := m.logLines()
	for _, msg := range []string{"dead turn", "continuation scheduled", "gave up"} {
		if n := count(lines, "INFO", msg, shopSession); n != 1 {
			t.Errorf("%d INFO lines %q about the session, want 1", n, msg)
		}
	}
	for _, l := range lines {
		if l.Msg == "gave up" && l.What != what {
			t.Errorf("the log says %q, the Inbox %q", l.What, what)
		}
		if l.Msg == "sending continuation" {
			t.Errorf("sending logged with no terminal found: %+v", l)
		}
		if l.Level == "ERROR" {
			t.Errorf("an ERROR: %+v", l)
		}
	}
	classified := false
	for _, l := range lines {
		classified = classified || l.Level == "DEBUG" && l.Msg == "record classified" && strings.Contains(l.Events, "turn_failed/provider_error")
	}
	if !classified || count(lines, "DEBUG", "decision", shopSession) == 0 {
		t.Errorf("log.level debug adds no classification or decision lines:\n%s", read(t, m.log))
	}
}

// On a machine with no notification server, the first notification that
// cannot be shown is one plain warning that suggests notify.ntfy.url;
// later ones are details, never an ERROR.
func TestNoNotificationServerIsOneWarning(t *testing.T) {
	m := newMachine(t)
	// Nothing on PATH shows a notification either.
	m.env = append(m.env, "PATH="+m.bin)
	m.start("NUDGE_LOG_LEVEL=debug")
	for _, s := range []string{"1a2b3c4d-1111-4111-8111-000000000001", "1a2b3c4d-1111-4111-8111-000000000002"} {
		daemontest.Claude(t, m.home, "/work/shop", s, daemontest.ClaudePrompt("hello"),
			daemontest.ClaudeAPIError("authentication_failed", 401, "Invalid API key · Please run /login"))
	}
	daemontest.Eventually(t, "both sign-ins told", 20*time.Second, func() bool {
		return count(m.logLines(), "DEBUG", "desktop notification not shown", "") == 2
	})
	var warnings []string
	for _, l := range m.logLines() {
		switch {
		case l.Level == "ERROR":
			t.Errorf("an ERROR: %+v", l)
		case l.Level == "WARN" && strings.Contains(l.Msg, "desktop notification"):
			warnings = append(warnings, l.Msg)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "set notify.ntfy.url") {
		t.Errorf("want one warning that suggests notify.ntfy.url, got %q", warnings)
	}
}

// snakeKey is the shape of every key in nudge's JSON.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// mayBeNull are the keys whose value may be null: an object or a value
// that is absent (docs/behaviour.md §8), never a list.
var mayBeNull = map[string]bool{"daemon": true, "settings": true, "toggles": true, "time": true, "class": true, "code": true, "message": true, "reset_at": true}

// checkJSON fails unless doc is JSON whose keys are all snake_case and
// whose only nulls are in mayBeNull (a list is [] when empty).
func checkJSON(t *testing.T, what string, doc []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", what, err, doc)
		}
		walk(t, what, "", v)
	}
}

func walk(t *testing.T, what, path string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !snakeKey.MatchString(k) {
				t.Errorf("%s: key %s.%s is not snake_case", what, path, k)
			}
			if x == nil && !mayBeNull[k] {
				t.Errorf("%s: %s.%s is null", what, path, k)
			}
			walk(t, what, path+"."+k, x)
		}
	case []any:
		for i, x := range v {
			walk(t, what, fmt.Sprintf("%s[%d]", path, i), x)
		}
	}
}

// Every JSON output of the CLI and of the Inbox window's API has
// snake_case keys and [] for an empty list, with or without a database and
// a daemon.
func TestJSONOutputsAreSnakeCaseAndListsNeverNull(t *testing.T) {
	m := newMachine(t)
	cli := func(args ...string) []byte {
		t.Helper()
		out, err := m.nudge(args...)
		if err != nil {
			t.Fatal(err)
		}
		checkJSON(t, strings.Join(args, " "), []byte(out))
		return []byte(out)
	}
	// Nothing yet: no database, no daemon.
	if out := cli("inbox", "--json"); strings.TrimSpace(string(out)) != "[]" {
		t.Errorf("inbox --json without a database: %s", out)
	}
	// Every key is there, daemon and settings null: one shape for scripts.
	var st map[string]any
	if err := json.Unmarshal(cli("status", "--json"), &st); err != nil || len(st) != 3 || st["daemon"] != nil || st["settings"] != nil {
		t.Errorf("status --json without a daemon: %v, %v; want daemon, settings and sessions, the first two null", st, err)
	}
	cli("config", "--json")

	d := m.start("NUDGE_RETRY_DELAYS=1s,1s,1s", "NUDGE_NOTIFY_DESKTOP=false")
	if out := cli("inbox", "--json"); strings.TrimSpace(string(out)) != "[]" {
		t.Errorf("inbox --json of an empty Inbox: %s", out)
	}
	cli("inbox", "--json", "--unread")
	var running struct {
		Daemon map[string]any `json:"daemon"`
	}
	if err := json.Unmarshal(cli("status", "--json"), &running); err != nil || running.Daemon == nil {
		t.Fatalf("status --json of the daemon: %v", err)
	}
	if files, ok := running.Daemon["skipped_files"].([]any); !ok || len(files) != 0 {
		t.Errorf("status --json: skipped_files = %#v, want [] with no line skipped", running.Daemon["skipped_files"])
	}
	cli("config", "--json")

	m.deadTurn(shopSession)
	daemontest.Eventually(t, "the Inbox entry", 20*time.Second, func() bool { return len(m.entries()) == 1 })
	var es []map[string]any
	if err := json.Unmarshal(cli("inbox", "--json"), &es); err != nil || len(es) != 1 {
		t.Fatalf("inbox --json: %v %v", es, err)
	}
	for _, k := range []string{"id", "time", "agent", "project", "session", "what", "error_text", "class", "code", "attempts", "read"} {
		if _, ok := es[0][k]; !ok {
			t.Errorf("inbox --json entry lacks %q: %v", k, es[0])
		}
	}
	cli("status", "--json")
	cli("explain", "--json", shopSession)
	transcript, _ := filepath.Glob(filepath.Join(m.home, ".claude", "projects", "*", shopSession+".jsonl"))
	cli(append([]string{"classify", "--json"}, transcript...)...)
	if _, err := m.nudge("inbox", "read-all"); err != nil {
		t.Fatal(err)
	}
	if out := cli("inbox", "--json", "--unread"); strings.TrimSpace(string(out)) != "[]" {
		t.Errorf("inbox --json --unread with none unread: %s", out)
	}

	// The Inbox window's API, as another tool reads it.
	data := filepath.Join(m.home, "..", "data")
	base := strings.TrimSpace(read(t, filepath.Join(data, "web.url")))
	secret := strings.TrimSpace(read(t, filepath.Join(data, "web.secret")))
	api := func(method, path, body string) []byte {
		t.Helper()
		req, err := http.NewRequest(method, base+strings.TrimPrefix(path, "/"), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+secret)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %s %s", method, path, resp.Status, b)
		}
		checkJSON(t, method+" "+path, b)
		return b
	}
	api("GET", "/api/status", "")
	api("GET", "/api/entries", "")
	if b := api("GET", "/api/entries?unread=1", ""); strings.TrimSpace(string(b)) != "[]" {
		t.Errorf("GET /api/entries?unread=1 with none unread: %s", b)
	}
	api("GET", "/api/sessions/"+shopSession, "")
	api("GET", "/api/sessions/"+shopSession+"/timeline", "")
	if b := api("POST", "/api/settings", `{"paused": true}`); !strings.Contains(string(b), `"paused":true`) {
		t.Errorf("POST /api/settings: %s", b)
	}
	if _, err := m.nudge("inbox", "clear"); err != nil {
		t.Fatal(err)
	}
	if b := api("GET", "/api/entries", ""); strings.TrimSpace(string(b)) != "[]" {
		t.Errorf("GET /api/entries of an empty Inbox: %s", b)
	}

	// A database and no daemon.
	if _, err := m.nudge("quit"); err != nil {
		t.Fatal(err)
	}
	// quit returned once the daemon stopped: its socket is gone already,
	// and its lock free for the next daemon.
	if _, err := os.Stat(filepath.Join(data, "nudge.sock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("nudge quit returned with the daemon's socket still there: %v", err)
	}
	if lock, err := os.Open(filepath.Join(data, "nudge.lock")); err != nil {
		t.Error(err)
	} else {
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Errorf("nudge quit returned with the daemon's lock still held: %v", err)
		}
		lock.Close()
	}
	d.Exit(t)
	if out := cli("inbox", "--json"); strings.TrimSpace(string(out)) != "[]" {
		t.Errorf("inbox --json of an empty Inbox, no daemon: %s", out)
	}
	cli("status", "--json")
	cli("explain", "--json", shopSession)
	cli("config", "--json")
}

// exitCode runs nudge (daemontest.Run) with env and args and returns its
// exit status and what it printed: its standard output, then its standard
// error.
func exitCode(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	code, stdout, stderr, err := daemontest.Run(env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return code, string(stdout) + string(stderr)
}

// Bad usage is exit status 2 and names what was meant; a window that cannot
// be opened says how to open it instead; a first start says what nudge
// watches.
func TestUsageAndFirstStart(t *testing.T) {
	m := newMachine(t)
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"help", "nonexist"}, 2, `unknown command "nonexist" for "nudge"`},
		{[]string{"help", "stauts"}, 2, `did you mean "status"?`},
		{[]string{"stauts"}, 2, `unknown command "stauts" for "nudge"; did you mean "status"?`},
		{[]string{"inbox", "reed", "3"}, 2, `unknown command "reed" for "nudge inbox"; did you mean "read"?`},
		{[]string{"inbox", "--url", "--json"}, 2, "--url and --json cannot be used together"},
		{[]string{"help", "inbox"}, 0, "nudge inbox read ID..."},
	} {
		if code, out := exitCode(t, m.env, c.args...); code != c.code || !strings.Contains(out, c.says) {
			t.Errorf("nudge %v: exit %d, want %d saying %q:\n%s", c.args, code, c.code, c.says, out)
		}
	}

	m.start()
	out, err := m.nudge("status")
	if err != nil {
		t.Fatal(err)
	}
	claudeRoot := filepath.Join(m.home, ".claude")
	if strings.Contains(out, "no sessions seen yet") || !strings.Contains(out, "no session active in the last 24 hours; nudge watches these folders for them:") ||
		!strings.Contains(out, claudeRoot) {
		t.Errorf("status on a first start does not say what it watches:\n%s", out)
	}

	// No display: nothing to open a browser on.
	noDisplay := append(append([]string{}, m.env...), "DISPLAY=", "WAYLAND_DISPLAY=")
	code, said := exitCode(t, noDisplay, "inbox", "--open")
	if code != 1 || !strings.Contains(said, "no display") || !strings.Contains(said, "run `nudge inbox --url` and open the link") || strings.Count(said, "\n") != 1 {
		t.Errorf("inbox --open with no display: exit %d, want 1 and one line saying how to open it:\n%s", code, said)
	}
	if _, err := os.Stat(filepath.Join(m.home, "..", "data", "inbox.html")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a sign-in launcher written with no browser to open it: %v", err)
	}
}
