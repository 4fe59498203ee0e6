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

	"nudge/e2e/fakechat"
	"nudge/internal/testenv"
)

// kimiCLI is the known-good Kimi Code: the wrapper .ci/install-agents.sh
// writes into the cache (docs/agents/kimi.md, docs/platform.md §9).
var kimiCLI = agentCLI{name: "Kimi Code", env: "NUDGE_E2E_KIMI", install: "kimi", version: "2.1.0",
	bin: filepath.Join("bin", "kimi")}

// TestRealKimiRecoversAfter500 runs Kimi Code in a tmux pane against a fake
// provider that answers 500 to both of the CLI's own attempts, and checks
// that nudge types its continuation once and the next turn completes.
func TestRealKimiRecoversAfter500(t *testing.T) {
	k := startKimi(t, "500", "500")
	k.p.typeLine("hello", "> hello")
	k.waitTurns("the failed turn", func(ts []kimiWireTurn) bool {
		return len(ts) >= 1 && ts[0].Reason == "failed" && ts[0].Code == "provider.api_error"
	})
	k.waitTurns("the continuation turn completed", func(ts []kimiWireTurn) bool {
		return len(ts) >= 2 && ts[1].Text == continuation && ts[1].Origin == "user" && ts[1].Reason == "completed"
	})
	// A second continuation would come one retry delay (3 s) after the first.
	time.Sleep(5 * time.Second)
	ts := k.turns()
	if len(ts) != 2 {
		t.Errorf("turns = %+v, want the failed one and one continuation", ts)
	} else if gap := ts[1].Start.Sub(ts[0].End); gap < 1900*time.Millisecond {
		t.Errorf("continuation sent %v after the failure, before the configured 2s delay", gap)
	}
	var modes []string
	for _, r := range k.srv.Main() {
		modes = append(modes, r.Mode)
	}
	if main := k.srv.Main(); strings.Join(modes, ",") != "500,500,ok" || main[2].LastUserText != continuation {
		t.Errorf("main requests %+v, want 500, 500, then ok carrying the continuation", main)
	}
	if st, ok := k.status(); !ok || st.State != "finished" {
		t.Errorf("status %+v (found %v), want finished", st, ok)
	}
}

// TestRealKimiUsageLimitNotRetried: a quota answer (the CLI does not retry
// it) is a usage limit without a reset time, and nudge types nothing.
func TestRealKimiUsageLimitNotRetried(t *testing.T) {
	k := startKimi(t, "429-balance")
	k.p.typeLine("hello", "> hello")
	k.waitTurns("the quota failure", func(ts []kimiWireTurn) bool {
		return len(ts) == 1 && ts[0].Name == "APIProviderQuotaExhaustedError"
	})
	waitFor(t, "status usage_limit", 15*time.Second, func() (bool, string) {
		st, _ := k.status()
		return st.State == "usage_limit", k.d.cli("status", "--json")
	})
	k.w.step("status usage_limit")
	if st, _ := k.status(); st.ResetAt != nil {
		t.Errorf("reset time %v; Kimi gives none", st.ResetAt)
	}
	noContinuation(t, 6*time.Second, k.turns, k.srv.Main)
}

// TestRealKimiAuthToldOnce: a 401 is told once (one Inbox entry naming
// `kimi login`) and never retried.
func TestRealKimiAuthToldOnce(t *testing.T) {
	k := startKimi(t, "401")
	k.p.typeLine("hello", "> hello")
	k.waitTurns("the auth failure", func(ts []kimiWireTurn) bool {
		return len(ts) == 1 && ts[0].Code == "provider.auth_error"
	})
	waitFor(t, "status needs_signin", 15*time.Second, func() (bool, string) {
		st, _ := k.status()
		return st.State == "needs_signin", k.d.cli("status", "--json")
	})
	k.w.step("status needs_signin")
	noContinuation(t, 6*time.Second, k.turns, k.srv.Main)
	entries := k.d.inbox()
	if len(entries) != 1 || entries[0].Class != "auth" || entries[0].Agent != "kimi_code" ||
		!strings.Contains(entries[0].What, "kimi login") {
		t.Errorf("inbox %+v, want one auth entry naming `kimi login`", entries)
	}
}

// kimiRun is one test's Kimi Code in tmux, its fake provider and the daemon.
type kimiRun struct {
	t    *testing.T
	w    *world
	d    *daemon
	p    *pane
	srv  *fakechat.Server
	home string // KIMI_CODE_HOME, the default ~/.kimi-code of the world
}

// startKimi starts the fake provider with scenario, the daemon, and Kimi Code
// in a tmux pane, past the trust dialog to an empty prompt.
func startKimi(t *testing.T, scenario ...string) *kimiRun {
	kimi := kimiCLI.need(t)
	tmux := testenv.Need(t, "tmux")
	w := newWorld(t)
	k := &kimiRun{t: t, w: w, home: filepath.Join(w.home, ".kimi-code")}
	srv, baseURL := serveFake(w, fakechat.New, scenario)
	k.srv = srv
	k.writeConfig(baseURL)

	// The daemon finds ~/.kimi-code through HOME (agents.kimi_code.root is "").
	k.d = w.startDaemon()

	w.showOnFailure("wire turns", func() any { return fmt.Sprintf("%+v", k.turns()) })
	k.p = w.startPane(tmux, 160, 45, append(w.baseEnv(), "TERM=xterm-256color",
		// docs/agents/kimi.md A11: no update check, no telemetry, loopback only.
		"KIMI_CODE_NO_AUTO_UPDATE=1", "KIMI_DISABLE_TELEMETRY=1", "NO_PROXY=127.0.0.1,localhost"), kimi)
	// The first launch in a folder asks for trust; Enter picks "Trust" (docs/agents/kimi.md A10).
	k.p.waitScreen("the trust dialog", func(s string) bool { return strings.Contains(s, "Trust this folder?") })
	k.p.press("Enter")
	k.p.waitScreen("the empty prompt", func(s string) bool {
		return strings.Contains(s, "Welcome to Kimi Code!") && strings.Contains(s, "│ >")
	})
	w.step("Kimi Code at its prompt")
	return k
}

// writeConfig points Kimi Code at the fake with its own retries cut to two
// attempts per step (docs/agents/kimi.md A5, A11).
func (k *kimiRun) writeConfig(baseURL string) {
	if err := os.MkdirAll(k.home, 0o700); err != nil {
		k.t.Fatal(err)
	}
	cfg := fmt.Sprintf(`default_model = "fake"

[providers.fake]
type = "kimi"
base_url = %q
api_key = "sk-fake-test-key"

[models.fake]
provider = "fake"
model = "fake-model"
max_context_size = 262144

[loop_control]
max_attempts_per_step = 2
`, baseURL+"/v1")
	if err := os.WriteFile(filepath.Join(k.home, "config.toml"), []byte(cfg), 0o600); err != nil {
		k.t.Fatal(err)
	}
}

// wire is the session's agents/main/wire.jsonl ("" before the first message
// creates the session).
func (k *kimiRun) wire() string {
	files, _ := filepath.Glob(filepath.Join(k.home, "sessions", "*", "*", "agents", "main", "wire.jsonl"))
	if len(files) == 1 {
		return files[0]
	}
	return ""
}

// session is the session id, the folder above agents/ (docs/agents/kimi.md A1).
func (k *kimiRun) session() string {
	if w := k.wire(); w != "" {
		return filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(w))))
	}
	return ""
}

// kimiWireTurn is one turn of the wire: its canonical turn.prompt and turn.ended.
type kimiWireTurn struct {
	ID     int
	Text   string
	Origin string
	Reason string // "" while open
	Code   string
	Name   string
	Start  time.Time // turn.prompt's time
	End    time.Time // turn.ended's time
}

// turns reads the canonical turn records of the wire (docs/agents/kimi.md A2).
func (k *kimiRun) turns() []kimiWireTurn {
	data, err := os.ReadFile(k.wire())
	if err != nil {
		return nil
	}
	var turns []kimiWireTurn
	for _, line := range bytes.Split(data, []byte("\n")) {
		var r struct {
			Type   string `json:"type"`
			Kind   string `json:"kind"`
			TurnID int    `json:"turnId"`
			Reason string `json:"reason"`
			Time   int64  `json:"time"` // Unix milliseconds
			Origin struct{ Kind string }
			Input  []struct{ Type, Text string }
			Error  *struct{ Code, Name string }
		}
		if json.Unmarshal(line, &r) != nil || r.Kind == "event" {
			continue
		}
		switch r.Type {
		case "turn.prompt":
			var text []string
			for _, in := range r.Input {
				text = append(text, in.Text)
			}
			turns = append(turns, kimiWireTurn{ID: r.TurnID, Text: strings.Join(text, "\n"), Origin: r.Origin.Kind,
				Start: time.UnixMilli(r.Time)})
		case "turn.ended":
			for i := range turns {
				if turns[i].ID == r.TurnID {
					turns[i].Reason, turns[i].End = r.Reason, time.UnixMilli(r.Time)
					if r.Error != nil {
						turns[i].Code, turns[i].Name = r.Error.Code, r.Error.Name
					}
				}
			}
		}
	}
	return turns
}

func (k *kimiRun) waitTurns(what string, ok func([]kimiWireTurn) bool) {
	k.t.Helper()
	waitTurns(k.w, what, 60*time.Second, k.turns, ok)
}

// status is the session's row in `nudge status --json`.
func (k *kimiRun) status() (sessionStatus, bool) {
	return sessionIn(k.d.cli("status", "--json"), "kimi_code", k.session())
}
