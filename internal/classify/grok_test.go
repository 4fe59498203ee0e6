package classify

import (
	"database/sql"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/internal/watch/agentdb"
)

// grokSamples holds hook record files constructed from docs/agents/grok.md §3
// (see testdata/grok/README.md): Grok writes no files of its own to sample.
var grokSamples = filepath.Join("testdata", "grok")

func grokAgent(t testing.TB) Agent {
	t.Helper()
	a, ok := Lookup(grokName)
	if !ok {
		t.Fatal("agent grok is not registered")
	}
	return a
}

var grokGolden = []struct {
	file, final, code string
}{
	{"stopfailure-503.jsonl", "turn_failed/provider_error", "http/503"}, // fixed 503 text; the Stop after it adds nothing
	{"stopfailure-auth.jsonl", "turn_failed/auth", "http/401"},
	{"stopfailure-body-message.jsonl", "turn_failed/usage_limit", ""},
	{"stopfailure-context.jsonl", "turn_failed/rejected", ""},
	{"stop-no-reply.jsonl", "turn_failed/unknown", "no_reply"}, // grok.db gained no reply between the prompt and Stop
	{"stop-with-reply.jsonl", "turn_done/-", ""},
	{"stop-no-database.jsonl", "turn_done/-", ""}, // no count: the documented "finished"
	{"open-turn.jsonl", "open/-", ""},
}

func TestGrokGoldenSamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(grokSamples, "*.jsonl"))
	if len(files) != len(grokGolden) {
		t.Errorf("%d samples, %d expectations: every sample needs a row", len(files), len(grokGolden))
	}
	agent := grokAgent(t)
	for _, g := range grokGolden {
		t.Run(g.file, func(t *testing.T) {
			events, err := readFile(filepath.Join(grokSamples, g.file), agent)
			if err != nil {
				t.Fatal(err)
			}
			kind, class, _ := claudeFinal(events)
			code := ""
			for _, e := range events {
				if e.Kind == TurnFailed {
					code = e.Failure.Code
				}
				if e.Session != "6f1c" || e.Project != "/home/dev/project" || e.Agent != grokName {
					t.Errorf("event names the wrong session: %+v", e)
				}
			}
			if kind+"/"+class != g.final || code != g.code {
				for _, e := range events {
					line, _ := e.MarshalLine()
					t.Logf("%s", line)
				}
				t.Errorf("got %s/%s code %q, want %s code %q", kind, class, code, g.final, g.code)
			}
		})
	}
}

func TestGrokPromptIsAPersonsTurn(t *testing.T) {
	events, err := readFile(filepath.Join(grokSamples, "stop-with-reply.jsonl"), grokAgent(t))
	if err != nil {
		t.Fatal(err)
	}
	claudeSameKinds(t, events, UserMessage, TurnStarted, TurnDone)
	if events[0].Text != "fix the build" {
		t.Errorf("text = %q", events[0].Text)
	}
	if want := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC); !events[0].Time.Equal(want) {
		t.Errorf("time = %v, want the receive time", events[0].Time)
	}
}

func TestGrokFailureText(t *testing.T) {
	for text, want := range map[string]Class{
		"The API server encountered an internal error. Please try again later.":              ProviderError,
		"Rate limit exceeded. Please wait a moment and try again.":                           ProviderError,
		"The request timed out. Please try again.":                                           ProviderError,
		"The requested model or endpoint was not found. Check your model name and base URL.": Rejected,
		"Access denied. Your API key does not have permission for this request.":             Auth,
		"Request failed with status 401":                                                     Auth,
		"Incorrect API key: invalid api_key":                                                 Auth,
		"You exceeded your current quota":                                                    UsageLimit,
		"fetch failed: connection reset by peer":                                             ProviderError,
		"The model grok-9 is currently overloaded":                                           ProviderError,
		"context_length_exceeded":                                                            Rejected,
		"Cannot read properties of undefined (reading 'map')":                                Unknown,
		"": Unknown,
	} {
		if got := grokFailure(text, time.Time{}); got.Class != want {
			t.Errorf("%q: class %s, want %s", text, got.Class, want)
		} else if want == Auth && got.Hint != grokLoginHint {
			t.Errorf("%q: no login hint", text)
		}
	}
	// A StopFailure error that is not a string is kept as its JSON text.
	if got := grokErrorText(json.RawMessage(`{"status":503}`)); got != `{"status":503}` {
		t.Errorf("error text = %q", got)
	}
}

// grokDB creates a grok.db with grok-dev's messages table (docs/agents/grok.md §2) in
// WAL mode, holding n assistant messages of session.
func grokDB(t *testing.T, root, session string, n int) *sql.DB {
	t.Helper()
	name := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(root, "grok.db"))}).String()
	db, err := sql.Open("sqlite", name+"?_pragma=journal_mode(wal)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, message_json TEXT NOT NULL, created_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := db.Exec(`INSERT INTO messages VALUES (?, ?, 'user', '{"role":"user","content":"q"}', '2026-09-01'), (?, ?, 'assistant', '{"role":"assistant","content":"a"}', '2026-09-01')`,
			session, 2*i, session, 2*i+1); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func TestGrokHookRecord(t *testing.T) {
	root := t.TempDir()
	db := grokDB(t, root, "6f1c", 2)
	now := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
	prompt := `{"hook_event_name":"UserPromptSubmit","user_prompt":"fix the build","session_id":"6f1c","cwd":"/home/dev/project"}`
	stop := `{"hook_event_name":"Stop","session_id":"6f1c","cwd":"/home/dev/project"}`

	path, line, err := grokHook(t, []byte(prompt+"\n"), "UserPromptSubmit", root, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "nudge", "hooks", "6f1c.jsonl"); path != want {
		t.Errorf("path = %s, want %s", path, want)
	}
	var rec grokRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Replies == nil || *rec.Replies != 2 || rec.ReceivedAt != "2026-09-01T10:00:00Z" || string(rec.Input) != prompt {
		t.Errorf("record = %s", line)
	}
	if !recognizeGrok("elsewhere.jsonl", line) {
		t.Error("a hook record is not recognised by its content")
	}

	// The turn failed: grok-dev wrote nothing, so Stop sees the same count.
	_, stopLine, err := grokHook(t, []byte(stop), "Stop", root, now.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	r := newGrokReader(path)
	events := append(r.Read(line), r.Read(stopLine)...)
	claudeSameKinds(t, events, UserMessage, TurnStarted, TurnFailed)

	// The next turn got its reply.
	if _, err := db.Exec(`INSERT INTO messages VALUES ('6f1c', 9, 'assistant', '{}', '2026-09-01')`); err != nil {
		t.Fatal(err)
	}
	_, line2, _ := grokHook(t, []byte(prompt), "", root, now.Add(time.Minute))
	if _, err := db.Exec(`INSERT INTO messages VALUES ('6f1c', 10, 'assistant', '{}', '2026-09-01')`); err != nil {
		t.Fatal(err)
	}
	_, stop2, _ := grokHook(t, []byte(stop), "", root, now.Add(2*time.Minute))
	claudeSameKinds(t, append(r.Read(line2), r.Read(stop2)...), UserMessage, TurnStarted, TurnDone)
}

func TestGrokHookRecordEdges(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	t.Run("no grok.db: no count", func(t *testing.T) {
		_, line, err := grokHook(t, []byte(`{"hook_event_name":"Stop","session_id":"s"}`), "Stop", root, now)
		if err != nil || strings.Contains(string(line), `"replies"`) {
			t.Errorf("line %s, err %v", line, err)
		}
	})
	t.Run("a grok.db without the table: no count", func(t *testing.T) {
		other := t.TempDir()
		if err := os.WriteFile(filepath.Join(other, "grok.db"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, line, err := grokHook(t, []byte(`{"hook_event_name":"Stop","session_id":"s"}`), "Stop", other, now)
		if err != nil || strings.Contains(string(line), `"replies"`) {
			t.Errorf("line %s, err %v", line, err)
		}
	})
	t.Run("the session id cannot leave the folder", func(t *testing.T) {
		for _, id := range []string{"../../etc/passwd", "..", "", "a/b\\c", strings.Repeat("x", 500)} {
			in, _ := json.Marshal(map[string]string{"hook_event_name": "StopFailure", "session_id": id, "error": "x"})
			path, _, err := grokHook(t, in, "", root, now)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Dir(path) != filepath.Join(root, "nudge", "hooks") || len(filepath.Base(path)) > 140 {
				t.Errorf("%q → %s", id, path)
			}
		}
	})
	t.Run("bad input is refused", func(t *testing.T) {
		for _, in := range [][]byte{nil, []byte("not json"), []byte(`[1]`), make([]byte, HookInputMax+1)} {
			if _, _, err := grokHook(t, in, "", root, now); err == nil {
				t.Errorf("%.20q accepted", in)
			}
		}
	})
	t.Run("the event name from the environment", func(t *testing.T) {
		_, line, _ := grokHook(t, []byte(`{"session_id":"s","error":"The API service is overloaded. Please try again later."}`), "StopFailure", root, now)
		events := newGrokReader("s.jsonl").Read(line)
		if len(events) != 1 || events[0].Kind != TurnFailed || events[0].Failure.Code != "http/529" {
			t.Errorf("events = %+v", events)
		}
	})
}

// The Grok hook's count is the session's replies in grok.db.
func TestGrokReplyCount(t *testing.T) {
	root := t.TempDir()
	grokDB(t, root, "a", 3)
	if n, err := grokReplies(t, root, "a"); err != nil || n != 3 {
		t.Errorf("replies = %d, %v; want 3", n, err)
	}
	if n, err := grokReplies(t, root, "b"); err != nil || n != 0 {
		t.Errorf("other session: %d, %v", n, err)
	}
	if _, err := grokReplies(t, t.TempDir(), "a"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing database: %v", err)
	}
}

// grokReplies counts a session's replies in root's grok.db as `nudge hook
// grok` does.
func grokReplies(t *testing.T, root, session string) (int, error) {
	h := grokAgent(t).Hook
	return agentdb.Count(t.Context(), filepath.Join(root, h.CountDB), h.CountQuery, session)
}

// grokHook runs the Grok hook's record function as `nudge hook grok` does,
// with root as Grok's home, and returns the file the line goes to.
func grokHook(t *testing.T, input []byte, event, root string, now time.Time) (path string, line []byte, err error) {
	file, line, err := grokAgent(t).Hook.Record(input, event, now, func(session string) (int, error) {
		return grokReplies(t, root, session)
	})
	return filepath.Join(root, filepath.FromSlash(file)), line, err
}

func TestGrokRecognize(t *testing.T) {
	if !recognizeGrok("/home/u/.grok/nudge/hooks/6f1c.jsonl", nil) {
		t.Error("a hook record file in its place is Grok's")
	}
	files, _ := filepath.Glob(filepath.Join(grokSamples, "*.jsonl"))
	for _, name := range files {
		head, _ := os.ReadFile(name)
		if a, ok := Recognize(name, head); !ok || a.Name != grokName {
			t.Errorf("%s recognised as %q", name, a.Name)
		}
	}
	claude, _ := filepath.Glob(filepath.Join(claudeSamples, "excerpts", "*.jsonl"))
	for _, name := range claude {
		head, _ := os.ReadFile(name)
		if recognizeGrok(name, head) {
			t.Errorf("%s is Claude's, not Grok's", name)
		}
	}
}
