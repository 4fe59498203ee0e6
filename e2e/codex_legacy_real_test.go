//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/fakeresponses"
)

// Codex CLI 0.98.0 writes the legacy rollout: no turn start or end, and a
// failed turn leaves no error record in it (docs/agents/codex.md §3.2,
// §4.3). Its TUI writes the error to $CODEX_HOME/log/codex-tui.log, which
// nudge reads once the rollout has been quiet a few seconds: a 5xx or a
// dropped stream is then a provider error and is continued, a 401 is told
// once as a sign-in failure.

// codexLegacyCLI is the legacy Codex CLI (docs/agents/codex.md §1).
var codexLegacyCLI = agentCLI{name: "Codex CLI (legacy)", env: "NUDGE_E2E_CODEX_LEGACY", install: "codex", version: "0.98.0",
	bin: filepath.Join("node_modules", ".bin", "codex"), kept: true}

// codexLegacyReady is on the 0.98.0 TUI's screen once it takes input.
const codexLegacyReady = "? for shortcuts"

// codexLegacyWait covers the CLI's answer, the quiet nudge waits for and the retry delay, with room to spare.
const codexLegacyWait = 90 * time.Second

// TestRealCodexLegacyRecoversAfter5xx: a turn killed by a 500, a 503 or a
// stream dropped mid-answer is continued once, typed into the 0.98.0 TUI,
// and the continued turn completes; nothing goes to the Inbox.
func TestRealCodexLegacyRecoversAfter5xx(t *testing.T) {
	for _, mode := range []string{"500", "503", fakeresponses.ModeDrop} {
		t.Run(mode, func(t *testing.T) {
			c := startCodexCLI(t, codexLegacyCLI, codexLegacyReady, mode)
			c.p.typeLine("hello", "hello")
			waitFor(t, "the continuation's turn to complete", codexLegacyWait, func() (bool, string) {
				main := c.srv.Main()
				return len(main) >= 2 && main[1].LastUserText == continuation && c.legacyAnswered(),
					fmt.Sprintf("main requests %+v\nrollout users %q\ninbox %+v", main, c.legacyUsers(), c.d.inbox())
			})
			time.Sleep(6 * time.Second) // longer than the second retry delay (3s)
			if users := c.legacyUsers(); len(users) != 2 || users[0] != "hello" || users[1] != continuation {
				t.Errorf("messages in the rollout = %q, want the person's and one continuation", users)
			}
			if main := c.srv.Main(); len(main) != 2 || main[0].Mode != mode || main[1].Mode != fakeresponses.ModeOK {
				t.Errorf("main requests = %+v, want the %s, then a success carrying the continuation", main, mode)
			}
			if es := c.d.inbox(); len(es) != 0 {
				t.Errorf("inbox = %+v, want nothing: the turn recovered", es)
			}
			var tl struct {
				Events []struct{ Kind, Class, Message string }
			}
			out := c.d.cli("explain", c.session(), "--json")
			if err := json.Unmarshal([]byte(out), &tl); err != nil {
				t.Fatalf("explain: %v: %s", err, out)
			}
			failed := 0
			for _, e := range tl.Events {
				if e.Kind == "turn_failed" {
					failed++
					if e.Class != "provider_error" || e.Message == "" {
						t.Errorf("dead turn %+v, want a provider error with the TUI's text", e)
					}
				}
			}
			if failed != 1 {
				t.Errorf("explain shows %d dead turns, want 1: %s", failed, out)
			}
		})
	}
}

// TestRealCodexLegacyAuthToldOnce: a 401 is told once, as a sign-in
// failure naming `codex login`, and never retried.
func TestRealCodexLegacyAuthToldOnce(t *testing.T) {
	c := startCodexCLI(t, codexLegacyCLI, codexLegacyReady, "401", "401", "401")
	c.p.typeLine("hello", "hello")
	waitFor(t, "the dead turn in the Inbox", codexLegacyWait, func() (bool, string) {
		es := c.d.inbox()
		return len(es) > 0, fmt.Sprintf("inbox %+v\nrollout users %q", es, c.legacyUsers())
	})
	time.Sleep(6 * time.Second) // longer than the first retry delay (2s)
	es := c.d.inbox()
	if len(es) != 1 || es[0].Agent != "codex" || es[0].Class != "auth" || !strings.Contains(es[0].What, "codex login") ||
		!strings.Contains(es[0].ErrorText, "401 Unauthorized") {
		t.Errorf("inbox = %+v, want one auth entry naming `codex login`, with the 401's text", es)
	}
	if users := c.legacyUsers(); len(users) != 1 || users[0] != "hello" {
		t.Errorf("messages in the rollout = %q, want only the person's (no continuation)", users)
	}
	st := c.d.cli("status", "--json")
	if s, ok := sessionIn(st, "codex", c.session()); !ok || s.State != "needs_signin" {
		t.Errorf("status = %s, want the session waiting for a sign-in", st)
	}
}

// legacyAnswered tells whether the legacy rollout's last turn got an
// answer (an agent_message, §4.3).
func (c *codexRun) legacyAnswered() bool {
	data, err := os.ReadFile(c.rollout())
	return err == nil && bytes.Contains(data, []byte(`"type":"agent_message"`))
}

// legacyUsers lists the user_message texts of the legacy rollout (§3.2).
func (c *codexRun) legacyUsers() []string {
	data, err := os.ReadFile(c.rollout())
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			Type    string `json:"type"`
			Payload struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Type == "event_msg" && r.Payload.Type == "user_message" {
			out = append(out, strings.TrimSpace(r.Payload.Message))
		}
	}
	return out
}
