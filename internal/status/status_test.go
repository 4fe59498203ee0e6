package status

import (
	"testing"
	"time"

	"nudge/internal/retry"
)

// The overall look: unread entries, a session that needs sign-in or a
// database that cannot save call for attention over a retry in progress; a
// session that gave up or failed was told once and is not retried
// (docs/behaviour.md §6).
func TestOverall(t *testing.T) {
	failing := &Daemon{StoreFailing: &StoreFailing{Since: time.Now(), Error: "disk full"}}
	for _, c := range []struct {
		name   string
		st     Status
		unread int
		want   Look
	}{
		{"nothing", Status{}, 0, AllFine},
		{"inbox not counted", Status{}, -1, AllFine},
		{"told and done", Status{Sessions: []Session{{State: "gave_up"}, {State: "failed"}, {State: "usage_limit"}, {State: "working"}}}, 0, AllFine},
		{"retrying", Status{Sessions: []Session{{State: "finished"}, {State: "retrying"}}}, 0, Retrying},
		{"waiting for a box", Status{Sessions: []Session{{State: "waiting_box"}}}, 0, Retrying},
		{"unread", Status{Sessions: []Session{{State: "retrying"}}}, 2, NeedsAttention},
		{"needs sign-in", Status{Sessions: []Session{{State: "retrying"}, {State: "needs_signin"}}}, 0, NeedsAttention},
		{"cannot save", Status{Daemon: failing, Sessions: []Session{{State: "retrying"}}}, 0, NeedsAttention},
		{"paused", Status{Settings: &Settings{Paused: true}, Sessions: []Session{{State: "retrying"}}}, 0, Retrying},
	} {
		if got := Overall(c.st, c.unread); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if w := NeedsAttention.Words(); w != "needs attention" {
		t.Errorf("needs_attention said %q", w)
	}
}

// TestEveryStateHasWords holds the views' tables to retry.States: every
// state has its words, and a session is busy exactly when its state has a
// continuation due.
func TestEveryStateHasWords(t *testing.T) {
	if len(stateWords) != len(retry.States)+1 { // and "" (watching)
		t.Errorf("%d states have words, %d states", len(stateWords)-1, len(retry.States))
	}
	for _, st := range retry.States {
		if w, ok := stateWords[string(st)]; !ok || w == "" {
			t.Errorf("state %s has no words", st)
		}
		if got := (Session{State: string(st)}).Busy(); got != st.Due() {
			t.Errorf("state %s: Busy() = %v, Due() = %v", st, got, st.Due())
		}
	}
}
