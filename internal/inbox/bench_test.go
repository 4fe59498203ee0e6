package inbox

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkFirstLook stores the positions of a first look at 20,000 files
// in one batch, then reads them back as a later start does: as a first
// look stores them (one row per folder) and, side by side, one row per
// file as every later position is stored.
func BenchmarkFirstLook(b *testing.B) {
	const files = 20000
	positions := make([]Position, files)
	for i := range positions {
		positions[i] = Position{Path: fmt.Sprintf("/home/u/.claude/projects/-home-u-src-project-%d/%08x-0000-4000-8000-%012x.jsonl", i%300, i, i),
			Dev: 2049, Inode: uint64(1000000 + i), Offset: int64(i * 4096)}
	}
	for _, c := range []struct {
		name  string
		batch Batch
	}{
		{"per-folder", Batch{Looked: positions}},
		{"per-file", Batch{Positions: positions}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				b.StopTimer()
				db, err := Open(filepath.Join(b.TempDir(), "nudge.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := db.Commit(ctx, c.batch); err != nil {
					b.Fatal(err)
				}
				got, err := db.Positions(ctx)
				if err != nil || len(got) != files {
					b.Fatalf("read back %d positions, %v", len(got), err)
				}
				b.StopTimer()
				db.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkBusyBatch commits a batch of busy agents: the positions of 10
// sessions, with an event and a state of 2 of them (a batch goes every
// 10–50 ms; most lines store nothing, docs/performance.md §3). Side by side:
// the statements prepared once (Open) and prepared in each transaction.
func BenchmarkBusyBatch(b *testing.B) {
	for _, c := range []struct {
		name     string
		prepared bool
	}{{"prepared-once", true}, {"prepared-per-batch", false}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := Open(filepath.Join(b.TempDir(), "nudge.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if !c.prepared {
				db.stmts = nil
			}
			now := time.Now()
			n := 0
			for b.Loop() {
				var batch Batch
				for i := range 10 {
					batch.Positions = append(batch.Positions, Position{Path: fmt.Sprintf("/home/u/.claude/projects/-p/s%03d.jsonl", i),
						Dev: 2049, Inode: uint64(i), Fingerprint: "256:0123456789abcdef", Offset: int64(n * 1024), Mark: "256:fedcba9876543210"})
				}
				for i := range 2 {
					session := fmt.Sprintf("s%03d", i)
					batch.Events = append(batch.Events, EventRow{Ident: fmt.Appendf(nil, "%d/%d", n, i), Agent: "claude", Session: session,
						Time: now, DetectedAt: now, Kind: "turn_started"})
					batch.Sessions = append(batch.Sessions, SessionRow{Agent: "claude", Session: session, State: "working", UpdatedAt: now,
						Machine: []byte(`{"v":1}`)})
				}
				if err := db.Commit(ctx, batch); err != nil {
					b.Fatal(err)
				}
				n++
			}
		})
	}
}
