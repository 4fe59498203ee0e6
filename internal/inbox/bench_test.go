package inbox

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
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
