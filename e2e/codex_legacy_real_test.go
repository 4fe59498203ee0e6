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
)

// Codex CLI 0.98.0 writes the legacy rollout: no turn start or end, and a
// failed turn leaves no error record at all (docs/agents/codex.md §3.2, §4.3).
// nudge judges such a turn once the rollout has been quiet for longer than
// the CLI's own retries; a 5xx and a 401 then leave the same tail, so the
// turn is told once as unknown and never retried.

// codexLegacyCLI is the legacy Codex CLI (docs/agents/codex.md §1).
var codexLegacyCLI = agentCLI{name: "Codex CLI (legacy)", env: "NUDGE_E2E_CODEX_LEGACY", install: "codex", version: "0.98.0",
	bin: filepath.Join("node_modules", ".bin", "codex")}

// codexLegacyWait covers the CLI's own retries, the 60 s of quiet nudge
// waits for, and its check every 30 s.
const codexLegacyWait = 150 * time.Second

// TestRealCodexLegacyProviderErrorToldOnce: a turn killed by 5xx answers is
// told once, as unknown, and nothing is typed.
func TestRealCodexLegacyProviderErrorToldOnce(t *testing.T) {
	codexLegacyToldOnce(t, "500")
}

// TestRealCodexLegacyAuthToldOnce: a 401 is told once and never retried.
func TestRealCodexLegacyAuthToldOnce(t *testing.T) {
	codexLegacyToldOnce(t, "401")
}

func codexLegacyToldOnce(t *testing.T, mode string) {
	c := startCodexCLI(t, codexLegacyCLI, "? for shortcuts", mode, mode, mode, mode, mode, mode, mode, mode, mode, mode, mode, mode)
	c.p.typeLine("hello", "hello")
	waitFor(t, "the dead turn in the Inbox", codexLegacyWait, func() (bool, string) {
		es := c.d.inbox()
		return len(es) > 0, fmt.Sprintf("inbox %+v\nrollout users %q", es, c.legacyUsers())
	})
	time.Sleep(6 * time.Second) // longer than the first retry delay (2s)
	es := c.d.inbox()
	if len(es) != 1 || es[0].Agent != "codex" || es[0].Class != "unknown" {
		t.Errorf("inbox = %+v, want one unknown entry (a legacy rollout records no cause)", es)
	}
	if users := c.legacyUsers(); len(users) != 1 || users[0] != "hello" {
		t.Errorf("messages in the rollout = %q, want only the person's (no continuation)", users)
	}
	st := c.d.cli("status", "--json")
	if s, ok := sessionIn(st, "codex", c.session()); !ok || s.State != "failed" {
		t.Errorf("status = %s, want the session failed", st)
	}
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
