package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/internal/config"
	"nudge/internal/inbox"
	"nudge/internal/outage"
	"nudge/internal/retry"
	"nudge/internal/status"
)

// `nudge outages` lists the stored outages, in words and as JSON; with
// none stored, it says so and --json is [].
func TestOutagesListed(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	t.Setenv("NUDGE_CONFIG", "")
	t.Setenv("NUDGE_DATA_DIR", data)
	if out, err := runNudge(t, "", "outages", "--json"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Fatalf("no database: %q, %v", out, err)
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := inbox.Open(filepath.Join(data, "nudge.db"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 4, 10, 42, 0, 0, time.UTC)
	o := outage.Outage{Provider: "anthropic", Start: start, End: start.Add(9 * time.Minute), Errors: []string{"API Error: 529 \x1b[31moverloaded"},
		Members: []outage.Member{{Key: retry.Key{Agent: "claude", Session: "a"}, Continued: true}, {Key: retry.Key{Agent: "claude", Session: "b"}, GaveUp: true}}}
	blob, _ := json.Marshal(o)
	err = db.Commit(context.Background(), inbox.Batch{Outages: []inbox.OutageRow{{Provider: o.Provider, Start: o.Start, End: o.End, Sessions: 2, Outage: blob}}})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err := runNudge(t, "", "outages")
	if err != nil || !strings.Contains(out, "Anthropic") || !strings.Contains(out, "2 sessions: 1 continued after it, 1 given up") || strings.Contains(out, "\x1b") {
		t.Errorf("outages: %v\n%q", err, out)
	}
	out, err = runNudge(t, "", "outages", "--json")
	var got []outage.Outage
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || len(got) != 1 || got[0].Provider != "anthropic" || len(got[0].Members) != 2 {
		t.Errorf("outages --json: %v\n%s", err, out)
	}
}

// `nudge continue` needs --all.
func TestContinueNeedsAll(t *testing.T) {
	_, err := runNudge(t, "", "continue")
	var u usageError
	if !errors.As(err, &u) {
		t.Errorf("continue without --all: %v, want a usage error", err)
	}
}

// `nudge status` says each outage while it lasts, in the menu's words.
func TestStatusSaysTheOutage(t *testing.T) {
	var b strings.Builder
	since := time.Date(2026, 12, 4, 10, 42, 0, 0, time.Local)
	printStatus(&b, status.Status{Daemon: &status.Daemon{Ready: true}, Settings: &status.Settings{RetryEnabled: true},
		Outages:  []status.Outage{{Provider: "anthropic", Title: "Anthropic", Since: since, Sessions: 3, Waiting: 2}},
		Sessions: []status.Session{{Agent: "claude", Session: "a", State: "waiting_provider", StateWords: "waiting for the provider"}}}, config.Config{})
	if !strings.Contains(b.String(), "\nAnthropic failing since 10:42 · 2 sessions waiting\n") {
		t.Errorf("status:\n%s", b.String())
	}
}
