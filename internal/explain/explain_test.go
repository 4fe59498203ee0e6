package explain

import (
	"bytes"
	"context"
	"errors"
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
	if !strings.Contains(out.String(), "turn_failed [rejected] API Error: 400") || !strings.Contains(out.String(), "decision  told the person") {
		t.Errorf("Print:\n%s", out.String())
	}
}
