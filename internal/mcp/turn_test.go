package mcp

import (
	"testing"
	"time"

	"nudge/internal/explain"
	"nudge/internal/status"
)

func TestLastTurnNeverCallsAFailedTurnDone(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	reset := t0.Add(5 * time.Hour)
	tl := explain.Timeline{
		Events: []explain.Event{
			{Time: at(1), Kind: "user_message"},
			{Time: at(2), Kind: "turn_done"},
			{Time: at(3), Kind: "user_message"},
			{Time: at(4), Kind: "turn_failed", Class: "provider_error", Code: "server_error/500", Message: "API Error: 500"},
		},
		Attempts: []explain.Try{
			{Attempt: 1, Status: "sent", Started: t0.Add(5 * time.Second)},
			{Attempt: 2, Status: "failed", Started: t0.Add(6 * time.Second)},
			{Attempt: 1, Status: "sent", Started: t0.Add(-time.Hour)}, // before the completed turn
		},
	}
	limited := explain.Timeline{Events: []explain.Event{{DetectedAt: *at(7), Kind: "usage_limited", Message: "You've hit your limit", ResetAt: &reset}}}
	for _, c := range []struct {
		state    string
		tl       explain.Timeline
		outcome  string
		ended    bool
		class    string
		endedAt  *time.Time
		attempts int
	}{
		{"gave_up", tl, OutcomeFailed, true, "provider_error", at(4), 1},
		{"failed", tl, OutcomeFailed, true, "provider_error", at(4), 1},
		{"needs_signin", tl, OutcomeFailed, true, "provider_error", at(4), 1},
		{"retrying", tl, OutcomeRetrying, false, "provider_error", at(4), 1},
		{"waiting_box", tl, OutcomeRetrying, false, "provider_error", at(4), 1},
		{"working", tl, OutcomeWorking, false, "", nil, 1},
		{"finished", explain.Timeline{Events: tl.Events[:2]}, OutcomeDone, true, "", at(2), 0},
		{"usage_limit", limited, OutcomeUsageLimited, true, "usage_limit", at(7), 0},
		{"failed", explain.Timeline{}, OutcomeFailed, true, "unknown", nil, 0},
		{"", explain.Timeline{}, OutcomeUnknown, false, "", nil, 0},
	} {
		got := lastTurn(status.Session{Session: "s", State: c.state}, c.tl)
		if got.Outcome != c.outcome || got.Ended != c.ended || got.Class != c.class || got.Attempts != c.attempts {
			t.Errorf("%s: %+v, want outcome %s ended %v class %q attempts %d", c.state, got, c.outcome, c.ended, c.class, c.attempts)
		}
		if (got.EndedAt == nil) != (c.endedAt == nil) || got.EndedAt != nil && !got.EndedAt.Equal(*c.endedAt) {
			t.Errorf("%s: ended at %v, want %v", c.state, got.EndedAt, c.endedAt)
		}
		if c.outcome == OutcomeFailed && c.class == "provider_error" && got.ErrorText != "API Error: 500" {
			t.Errorf("%s: error text %q", c.state, got.ErrorText)
		}
	}
	if got := lastTurn(status.Session{State: "usage_limit"}, limited); got.ResetAt == nil || !got.ResetAt.Equal(reset) {
		t.Errorf("usage limit reset = %v, want %v", got.ResetAt, reset)
	}
	ended := lastTurn(status.Session{State: "failed"}, tl)
	if !ended.endedAfter(time.Time{}) || !ended.endedAfter(t0) || ended.endedAfter(*at(4)) {
		t.Error("endedAfter does not compare with the turn's end")
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		dir, root string
		want      bool
	}{
		{"/a/b", "/a/b", true}, {"/a/b/c", "/a/b", true}, {"/a/b/c", "/a/b/", true},
		{"/a/bc", "/a/b", false}, {"/a", "/a/b", false}, {"/x", "/", true},
	} {
		if got := within(c.dir, c.root); got != c.want {
			t.Errorf("within(%q, %q) = %v", c.dir, c.root, got)
		}
	}
}
