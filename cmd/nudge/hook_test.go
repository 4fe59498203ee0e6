package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"nudge/internal/testenv"
)

// runNudge runs the CLI in-process with stdin and returns its stdout.
func runNudge(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// A Grok turn seen only through its hooks: `nudge hook grok` writes what
// `nudge classify` (with no --agent) reads back as a failed turn.
func TestHookGrokFeedsClassify(t *testing.T) {
	dir := t.TempDir()
	grokHome := filepath.Join(dir, "grok-home")
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("agents:\n  grok: {enabled: true, root: "+grokHome+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NUDGE_CONFIG", cfg)
	t.Setenv("NUDGE_DATA_DIR", filepath.Join(dir, "data"))
	t.Setenv("GROK_HOOK_EVENT", "")

	for _, in := range []string{
		`{"hook_event_name":"UserPromptSubmit","user_prompt":"fix the build","session_id":"6f1c","cwd":"/home/dev/project"}`,
		`{"hook_event_name":"StopFailure","error":"The API service is temporarily overloaded. Please try again later.","session_id":"6f1c","cwd":"/home/dev/project"}`,
	} {
		if out, err := runNudge(t, in, "hook", "grok"); err != nil {
			t.Fatalf("hook: %v: %s", err, out)
		}
	}
	file := filepath.Join(grokHome, "nudge", "hooks", "6f1c.jsonl")
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("hook file: %v %v", st, err)
	}

	// A copy elsewhere: recognised from its content, not only its place.
	elsewhere := filepath.Join(dir, "copy.jsonl")
	data, _ := os.ReadFile(file)
	if err := os.WriteFile(elsewhere, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runNudge(t, "", "classify", "--json", elsewhere)
	if err != nil {
		t.Fatalf("classify: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last struct{ Agent, Session, Kind, Class string }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(lines) != 3 || last.Agent != "grok" || last.Session != "6f1c" || last.Kind != "turn_failed" || last.Class != "provider_error" {
		t.Errorf("classify printed:\n%s", out)
	}
}

func TestHookRefusesBadUse(t *testing.T) {
	t.Setenv("NUDGE_CONFIG", filepath.Join(t.TempDir(), "none.yaml"))
	for _, args := range [][]string{{"hook", "claude"}, {"hook"}} {
		var u usageError
		if _, err := runNudge(t, "{}", args...); !errors.As(err, &u) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// Grok's database, which the hook asks for a count, is a FIFO no one
// writes to: the hook still records its line and returns, without waiting
// for a writer (grok-dev would kill it at its timeout, the line lost).
func TestHookGrokNeverWaitsOnAFIFO(t *testing.T) {
	dir := t.TempDir()
	grokHome := filepath.Join(dir, "grok-home")
	if err := os.MkdirAll(grokHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(grokHome, "grok.db"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("agents:\n  grok: {enabled: true, root: "+grokHome+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NUDGE_CONFIG", cfg)
	t.Setenv("NUDGE_DATA_DIR", filepath.Join(dir, "data"))
	t.Setenv("GROK_HOOK_EVENT", "")
	if err := testenv.Returns(t, "the hook", func() error {
		_, err := runNudge(t, `{"hook_event_name":"Stop","session_id":"6f1c","cwd":"/home/dev/project"}`, "hook", "grok")
		return err
	}); err != nil {
		t.Fatalf("hook: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(grokHome, "nudge", "hooks", "6f1c.jsonl")); err != nil || !strings.Contains(string(data), `"Stop"`) {
		t.Errorf("hook file: %q, %v", data, err)
	}
}
