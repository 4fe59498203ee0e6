package daemon

import (
	"context"
	"strings"
	"testing"
)

// A dead turn names the provider and model it failed against, as the
// agent's records say: in its timeline, its Inbox entry and the status.
func TestDeadTurnNamesItsProvider(t *testing.T) {
	c := newCore(t)
	c.start()
	request := map[string]any{"type": "api-request", "requestDigest": "d1", "params": map[string]any{"model": "claude-opus-5-5"}}
	c.write(prompt("p1", "task"), request, apiError("e1", 500, err500))
	c.waitState("retrying")
	if s := c.status().Sessions[0]; s.Provider != "anthropic" || s.Model != "claude-opus-5-5" {
		t.Errorf("status provider %q model %q", s.Provider, s.Model)
	}
	evs, _, _, err := c.store.Timeline(context.Background(), "claude", coreSession)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		if e.Kind == "turn_failed" {
			found = true
			if e.Provider != "anthropic" || !strings.Contains(e.Detail, "on Anthropic, model claude-opus-5-5") {
				t.Errorf("timeline event provider %q detail %q", e.Provider, e.Detail)
			}
		}
	}
	if !found {
		t.Fatal("no dead turn in the timeline")
	}
	c.write(prompt("p2", "again"), authError("e2"))
	c.eventually("the sign-in entry", func() bool { return len(c.entries()) == 1 })
	if e := c.entries()[0]; e.Provider != "anthropic" || e.Model != "claude-opus-5-5" {
		t.Errorf("entry provider %q model %q", e.Provider, e.Model)
	}
}
