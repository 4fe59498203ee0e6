package explain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/internal/inbox"
)

func TestFindAndLoad(t *testing.T) {
	db, err := inbox.Open(filepath.Join(t.TempDir(), "nudge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	err = db.Commit(ctx, inbox.Batch{
		Sessions: []inbox.SessionRow{
			{Agent: "claude", Session: "abc-111", Project: "/p", State: "failed", UpdatedAt: now},
			{Agent: "codex", Session: "abc-222", Project: "/q", State: "finished", UpdatedAt: now},
		},
		Events: []inbox.EventRow{
			{Agent: "claude", Session: "abc-111", Time: now, DetectedAt: now, Kind: "turn_failed", Class: "rejected", Message: "API Error: 400"},
		},
		Decisions: []inbox.DecisionRow{{Agent: "claude", Session: "abc-111", Time: now.Add(time.Second), What: "told the person"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Find(ctx, db, "abc"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("Find(shared prefix) = %v, want %v", err, ErrAmbiguous)
	}
	if _, err := Find(ctx, db, "zzz"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Find(unknown) = %v, want %v", err, ErrNoSession)
	}
	if _, err := Find(ctx, db, ""); !errors.Is(err, ErrNoSession) {
		t.Errorf("Find(\"\") = %v, want %v", err, ErrNoSession)
	}
	tl, err := Load(ctx, db, "abc-1")
	if err != nil {
		t.Fatal(err)
	}
	if tl.Agent != "claude" || tl.State != "failed" || len(tl.Events) != 1 || tl.Events[0].Class != "rejected" || len(tl.Decisions) != 1 || tl.Attempts == nil {
		t.Fatalf("Load = %+v", tl)
	}
	var out bytes.Buffer
	tl.Print(&out)
	if !strings.Contains(out.String(), "claude session abc-111 in /p — now failed\n") ||
		!strings.Contains(out.String(), "event     turn failed: request rejected: API Error: 400\n") ||
		!strings.Contains(out.String(), "decision  told the person\n") {
		t.Errorf("Print:\n%s", out.String())
	}
}

// The story says each moment in words, in time order: the state, events
// with their class, code, reset time and the agent's own text apart,
// decisions, and attempts with their backend and place.
func TestStory(t *testing.T) {
	time.Local = time.UTC
	at := func(s int) time.Time { return time.Date(2026, 5, 1, 10, 0, s, 0, time.UTC) }
	reset := at(0).Add(3 * time.Hour)
	finished := at(13)
	tl := New(inbox.SessionRow{Agent: "claude", Session: "s", Project: "/p", State: "gave_up"},
		[]inbox.EventRow{
			{DetectedAt: at(1), Kind: "turn_failed", Class: "provider_error", Code: "529", Message: "API Error: 529 <b>Overloaded</b>"},
			{DetectedAt: at(20), Kind: "usage_limited", Class: "usage_limit", Message: "limit", ResetAt: reset},
			{DetectedAt: at(30), Kind: "box_opened", Detail: "permission prompt"},
		},
		[]inbox.DecisionRow{{Time: at(2), What: "provider error: attempt 1 of 3 in 10s"},
			{Time: at(13), What: "told the person: nudge could not continue Claude Code: its process has exited"}},
		[]inbox.AttemptRow{
			{Attempt: 1, Status: "failed", Started: at(12), Finished: finished, Backend: "tmux", Target: "/tmp/tmux-0/default %3", Reason: "nudge could not continue Claude Code: its process has exited"},
			{Attempt: 2, Status: "sent", Started: at(14), Backend: "wrap", Target: "/run/w.sock /dev/pts/4"},
		})
	var got []string
	for _, l := range tl.Story() {
		got = append(got, fmt.Sprintf("%s %s %s %s | %s", l.At.Format("05"), l.Kind, l.Tone, l.Text, l.Quote))
	}
	want := []string{
		"01 event failed turn failed: provider error (529) | API Error: 529 <b>Overloaded</b>",
		"02 decision  provider error: attempt 1 of 3 in 10s | ",
		"12 attempt failed continuation 1 not delivered at tmux /tmp/tmux-0/default %3: nudge could not continue Claude Code: its process has exited | ",
		"13 decision  told the person why continuation 1 was not delivered | ",
		"14 attempt ok continuation 2 typed at wrap /run/w.sock /dev/pts/4 | ",
		"20 event  usage limit, resets at 13:00 UTC, Fri 1 May | limit",
		"30 event  box opened (permission prompt) | ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("story:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var out bytes.Buffer
	tl.Print(&out)
	if !strings.HasPrefix(out.String(), "claude session s in /p — now gave up\n") {
		t.Errorf("Print shows the state by its name:\n%s", out.String())
	}
}
