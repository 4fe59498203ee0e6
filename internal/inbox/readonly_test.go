package inbox

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"
)

func TestOpenReadOnlyReadsAndNeverWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	if _, err := OpenReadOnly(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenReadOnly(missing) = %v, want fs.ErrNotExist", err)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = db.Commit(ctx, Batch{Entries: []EntryRow{{Time: time.Now(), Agent: "claude", Session: "s1", What: "told", ErrorText: "API Error: 400"}}})
	if err != nil {
		t.Fatal(err)
	}
	// The writer has closed: no -wal or -shm file is left to lean on.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	defer ro.Close()
	es, err := ro.Entries(ctx, true)
	if err != nil || len(es) != 1 || es[0].ErrorText != "API Error: 400" {
		t.Fatalf("Entries = %+v, %v", es, err)
	}
	if err := ro.MarkAllRead(ctx); err == nil {
		t.Fatal("MarkAllRead through a read-only database succeeded")
	}
	if err := ro.SetMeta(ctx, "k", "v"); err == nil {
		t.Fatal("SetMeta through a read-only database succeeded")
	}
}
