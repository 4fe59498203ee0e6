//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/fakeanthropic"
	"nudge/internal/testenv"
)

// sessionID is the Claude Code session the test starts (--session-id).
const sessionID = "11111111-1111-4111-8111-111111111111"

// claudeCLI is the known-good Claude Code (docs/agents/claude.md §1).
var claudeCLI = agentCLI{name: "Claude Code", env: "NUDGE_E2E_CLAUDE", install: "claude", version: "2.1.332",
	bin: filepath.Join("node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")}

// TestRealClaudeRecoversAfter500 runs the real Claude Code CLI in a tmux
// pane against a fake Messages API that fails the first main-loop request
// with HTTP 500, and checks that the nudge daemon types its continuation
// into the pane and that the turn then completes.
func TestRealClaudeRecoversAfter500(t *testing.T) {
	claude := claudeCLI.need(t)
	tmux := testenv.Need(t, "tmux")
	w := newClaudeWorld(t)
	srv, baseURL := serveFake(w, fakeanthropic.New, []string{"500", "ok"})
	d := w.startDaemon()

	p := w.startClaude(tmux, claude, baseURL)
	reg := p.waitRegistry()
	w.step(fmt.Sprintf("registry %s", reg))
	p.waitScreen("prompt", func(screen string) bool { return strings.Contains(screen, "\n❯") })
	w.step("prompt on screen")

	p.typeLine("hello", "❯ hello")
	w.step("typed hello")
	expectRecovery(t, w, d, srv, "tmux")
	t.Logf("nudge status --json: %s", d.cli("status", "--json"))
	t.Logf("nudge explain --json: %s", d.cli("explain", sessionID, "--json"))
}

// expectRecovery checks, once "hello" was typed into the session, that
// its turn died from the scenario's 500, that nudge typed its continuation
// once through backend, after the configured delay, and that the turn then
// completed.
func expectRecovery(t *testing.T, w *world, d *daemon, srv *fakeanthropic.Server, backend string) {
	t.Helper()
	waitFor(t, "the synthetic 500 record", 60*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		return indexOf(recs, 0, isAPIError(500)) >= 0, summarize(recs)
	})
	w.step("500 record written")
	if reg := claudeRegistry(w); reg["status"] != "idle" {
		t.Logf("registry status after the error is %v, expected idle (docs/agents/claude.md §9.2)", reg["status"])
	}
	waitFor(t, "the continuation and a completed turn", 60*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		missing := recoveredTurn(recs)
		return missing == "", "missing: " + missing + "\n" + summarize(recs)
	})
	w.step("turn completed after the continuation")
	// A second continuation would come at the latest one retry delay (3s)
	// after the first; give it that long to show up.
	time.Sleep(5 * time.Second)

	recs := readRecords(w.transcript())
	if n := count(recs, isUserText(continuation)); n != 1 {
		t.Errorf("continuation recorded %d times, want once\n%s", n, summarize(recs))
	}
	failed := recs[indexOf(recs, 0, isAPIError(500))]
	sent := recs[indexOf(recs, 0, isUserText(continuation))]
	if gap := sent.Timestamp.Sub(failed.Timestamp); gap < 1900*time.Millisecond {
		t.Errorf("continuation sent %v after the failure, before the configured 2s delay", gap)
	}

	if main := srv.Main(); len(main) != 2 || main[0].Status != 500 || main[1].Status != 200 ||
		!strings.Contains(main[1].LastUserText, continuation) {
		t.Errorf("main-loop requests: want a 500 then a 200 carrying the continuation, got %+v", main)
	}
	d.sentOnceThrough(t, sessionID, backend)
}

// recoveredTurn checks the transcript for: the person's "hello", the
// synthetic 500 record, nudge's continuation typed into the pane, then a
// normal end (assistant end_turn, system turn_duration). It returns what is
// missing, or "".
func recoveredTurn(recs []record) string {
	return firstMissing(recs, []turnStep[record]{
		{"user hello", isUserText("hello")},
		{"500 record", isAPIError(500)},
		{"continuation typed", isUserText(continuation)},
		{"assistant end_turn", func(r record) bool { return r.Type == "assistant" && r.Message.StopReason == "end_turn" }},
		{"turn_duration", func(r record) bool { return r.Type == "system" && r.Subtype == "turn_duration" }},
	})
}

// newClaudeWorld is a world with Claude Code's first-run state written, so
// no onboarding, API-key or trust dialog opens (docs/agents/claude.md §10.2).
func newClaudeWorld(t *testing.T) *world {
	w := newWorld(t)
	state := map[string]any{
		"hasCompletedOnboarding": true,
		"theme":                  "dark",
		"customApiKeyResponses":  map[string]any{"approved": []string{apiKey}, "rejected": []string{}},
		"projects": map[string]any{w.project: map[string]any{
			"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
	}
	w.writeJSON(filepath.Join(w.home, ".claude.json"), state)
	return w
}

// apiKey is the dummy API key; short keys are approved whole (docs/agents/claude.md §10.2).
const apiKey = "sk-ant-dummy-key"

// transcript is the session file the CLI writes: projects/<dir>/<id>.jsonl,
// found by listing rather than by deriving <dir> (docs/agents/claude.md §2).
func (w *world) transcript() string {
	pattern := filepath.Join(w.home, ".claude", "projects", "*", sessionID+".jsonl")
	if files, _ := filepath.Glob(pattern); len(files) > 0 {
		return files[0]
	}
	return pattern
}

// startClaude runs Claude Code in a tmux pane against the fake at baseURL.
func (w *world) startClaude(tmux, claude, baseURL string) *pane {
	w.t.Helper()
	w.showOnFailure("transcript", func() any { return summarize(readRecords(w.transcript())) })
	return w.startPane(tmux, 200, 50, append(w.claudeEnv(baseURL), "TERM=xterm-256color"), claude, "--session-id", sessionID)
}

// claudeEnv is the environment Claude Code runs in against the fake at baseURL.
func (w *world) claudeEnv(baseURL string) []string {
	return append(w.baseEnv(),
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY="+apiKey,
		// docs/agents/claude.md §10.1: no outside traffic, no CLI retries.
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
	)
}

// registry returns the CLI's live registry entry for the session
// (~/.claude/sessions/<pid>.json, docs/agents/claude.md §7.1), or nil.
func (p *pane) registry() map[string]any { return claudeRegistry(p.w) }

// claudeRegistry returns the live registry entry of the world's session, or nil.
func claudeRegistry(w *world) map[string]any {
	files, _ := filepath.Glob(filepath.Join(w.home, ".claude", "sessions", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var reg map[string]any
		if json.Unmarshal(b, &reg) == nil && reg["sessionId"] == sessionID {
			return reg
		}
	}
	return nil
}

// waitRegistry waits for the registry entry naming the tmux pane and
// returns it as JSON.
func (p *pane) waitRegistry() string {
	var last []byte
	waitFor(p.w.t, "the CLI's registry entry with a tmux pane", 30*time.Second, func() (bool, string) {
		reg := p.registry()
		last, _ = json.Marshal(reg)
		pane, _ := reg["tmux"].(string)
		return strings.HasPrefix(pane, "cc:"), string(last)
	})
	return string(last)
}

// record is the part of a transcript line the test looks at (docs/agents/claude.md §3).
type record struct {
	Type              string    `json:"type"`
	Subtype           string    `json:"subtype"`
	Timestamp         time.Time `json:"timestamp"`
	IsSidechain       bool      `json:"isSidechain"`
	IsMeta            bool      `json:"isMeta"`
	IsAPIErrorMessage bool      `json:"isApiErrorMessage"`
	APIErrorStatus    int       `json:"apiErrorStatus"`
	PromptSource      string    `json:"promptSource"`
	Message           struct {
		Content    json.RawMessage `json:"content"`
		StopReason string          `json:"stop_reason"`
	} `json:"message"`
}

// text is the record's message text: a typed prompt's string content, or
// the text blocks joined.
func (r record) text() string {
	var s string
	if json.Unmarshal(r.Message.Content, &s) == nil {
		return s
	}
	var blocks []struct{ Type, Text string }
	json.Unmarshal(r.Message.Content, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// readRecords reads the transcript's conversation records; a missing file
// or a half-written last line reads as fewer records.
func readRecords(path string) []record {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var recs []record
	for _, line := range bytes.Split(data, []byte("\n")) {
		var r record
		if json.Unmarshal(line, &r) != nil || r.IsSidechain {
			continue
		}
		if r.Type == "user" || r.Type == "assistant" || r.Type == "system" {
			recs = append(recs, r)
		}
	}
	return recs
}

func isUserText(text string) func(record) bool {
	return func(r record) bool {
		return r.Type == "user" && !r.IsMeta && r.PromptSource == "typed" && strings.TrimSpace(r.text()) == text
	}
}

func isAPIError(status int) func(record) bool {
	return func(r record) bool {
		return r.Type == "assistant" && r.IsAPIErrorMessage && r.APIErrorStatus == status
	}
}

// summarize renders conversation records one per line for failure messages.
func summarize(recs []record) string {
	var b strings.Builder
	for _, r := range recs {
		text := r.text()
		if len(text) > 100 {
			text = text[:100] + "…"
		}
		fmt.Fprintf(&b, "%s %s %s err=%v/%d stop=%s src=%s %q\n", r.Timestamp.Format("15:04:05.000"), r.Type,
			r.Subtype, r.IsAPIErrorMessage, r.APIErrorStatus, r.Message.StopReason, r.PromptSource, text)
	}
	return b.String()
}
