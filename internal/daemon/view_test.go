package daemon

import (
	"testing"
	"time"

	"nudge/internal/inbox"
	"nudge/internal/retry"
	"nudge/internal/status"
)

// The views show a pending continuation's time as retry_at and a usage
// limit's reset as reset_at, whether the session comes from the running
// machine or from the database (one constructor, sessionView).
func TestSessionViewTimes(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	until := now.Add(30 * time.Second)
	for _, c := range []struct {
		state        retry.State
		until        time.Time
		retry, reset bool
	}{
		{retry.Retrying, until, true, false},
		{retry.WaitingBox, until, true, false},
		{retry.UsageLimit, until, false, true},
		{retry.UsageLimit, time.Time{}, false, false},
		{retry.Working, until, false, false},
		{retry.Failed, time.Time{}, false, false},
	} {
		key := retry.Key{Agent: "claude", Session: "s"}
		live := sessionView(key, "/p", c.state, "note", c.until, now)
		stored := StoredSessions([]inbox.SessionRow{{Agent: "claude", Session: "s", Project: "/p", State: string(c.state),
			Note: "note", Until: c.until.In(time.FixedZone("x", 3600)), UpdatedAt: now}}, now)
		if len(stored) != 1 {
			t.Fatalf("%s: stored view %+v", c.state, stored)
		}
		for _, v := range []struct {
			from string
			at   *time.Time
			set  bool
		}{
			{"live retry_at", live.RetryAt, c.retry}, {"live reset_at", live.ResetAt, c.reset},
			{"stored retry_at", stored[0].RetryAt, c.retry}, {"stored reset_at", stored[0].ResetAt, c.reset},
		} {
			if (v.at != nil) != v.set || v.at != nil && (!v.at.Equal(until) || v.at.Location() != time.UTC) {
				t.Errorf("%s: %s = %v, want set %v (at %v UTC)", c.state, v.from, v.at, v.set, until)
			}
		}
		if live.Agent != "claude" || live.Session != "s" || live.Project != "/p" || live.State != string(c.state) || live.Note != "note" || !live.UpdatedAt.Equal(now) {
			t.Errorf("%s: view %+v", c.state, live)
		}
	}
}

// The note of a session that gave up, needs sign-in or waits for a usage
// limit is what the person was told, which the menu and the Inbox window
// show under it, whether the session comes from the running machine or from
// the database; other sessions have told nothing.
func TestSessionViewTold(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	told := map[retry.State]bool{retry.GaveUp: true, retry.NeedsSignIn: true, retry.UsageLimit: true}
	for _, state := range retry.States {
		want := ""
		if told[state] {
			want = "the note"
		}
		live := sessionView(retry.Key{Agent: "claude", Session: "s"}, "/p", state, "the note", time.Time{}, now)
		stored := StoredSessions([]inbox.SessionRow{{Agent: "claude", Session: "s", Project: "/p", State: string(state), Note: "the note", UpdatedAt: now}}, now)
		if live.Told != want || len(stored) != 1 || stored[0].Told != want {
			t.Errorf("%s: told %q live, %+v stored; want %q", state, live.Told, stored, want)
		}
	}
}

// Every session carries its state in the words the menu and the Inbox
// window show, whether it comes from the running machine or from the
// database.
func TestSessionViewStateWords(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	for _, state := range retry.States {
		want := status.StateWords(string(state))
		live := sessionView(retry.Key{Agent: "claude", Session: "s"}, "/p", state, "", time.Time{}, now)
		stored := StoredSessions([]inbox.SessionRow{{Agent: "claude", Session: "s", Project: "/p", State: string(state), UpdatedAt: now}}, now)
		if want == "" || live.StateWords != want || len(stored) != 1 || stored[0].StateWords != want {
			t.Errorf("%s: words %q live, %+v stored; want %q", state, live.StateWords, stored, want)
		}
	}
	if s := sessionView(retry.Key{Agent: "claude", Session: "s"}, "/p", retry.GaveUp, "", time.Time{}, now); s.StateWords != "gave up" {
		t.Errorf("gave_up said %q", s.StateWords)
	}
}
