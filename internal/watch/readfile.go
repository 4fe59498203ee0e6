package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"nudge/internal/classify"
	"nudge/internal/watch/disk"
	"nudge/internal/watch/opencode"
)

// listTimeout bounds the reading of a database or a server by ReadFile.
const listTimeout = 5 * time.Second

// ReadFile classifies the file at path at once, with a fresh Reader of
// agent: `nudge classify`, and the re-read of a live registry right before
// typing. Its records are those the watcher would hand out: the event rows
// of a database or a server's picture of a session for a classify.Listed
// reader, the whole file for a classify.WholeFile one, else its lines (a
// line over classify.MaxRecordBytes is skipped and logged). A
// classify.Settler is then settled by how long the file has been unchanged.
func ReadFile(ctx context.Context, path string, agent classify.Agent, log *slog.Logger) ([]classify.Event, error) {
	r := agent.NewReader(path, disk.Files{})
	var (
		events []classify.Event
		err    error
	)
	if _, listed := r.(classify.Listed); listed {
		var records [][]byte
		records, err = listRecords(ctx, path)
		for _, rec := range records {
			events = append(events, r.Read(rec)...)
		}
	} else {
		var f *os.File
		if f, _, err = disk.Open(path); err != nil {
			return nil, fmt.Errorf("classify %s: %w", path, err)
		}
		defer f.Close()
		events, err = classify.ReadRecords(r, f, func(n int) {
			log.Warn("skipped a line over the cap", "file", path, "bytes", n, "cap", classify.MaxRecordBytes)
		})
	}
	if err != nil {
		return events, fmt.Errorf("classify %s: %w", path, err)
	}
	if s, ok := r.(classify.Settler); ok {
		if info, err := os.Stat(path); err == nil {
			events = append(events, s.Settle(time.Since(info.ModTime()))...)
		}
	}
	return events, nil
}

// listRecords lists the records of a database, or the live picture of a
// session from an OpenCode server (classify.OpenCodeLivePath).
func listRecords(ctx context.Context, path string) ([][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	if pid, addr, session, ok := classify.OpenCodeLiveTarget(path); ok {
		return opencode.LiveRecords(ctx, pid, addr, session)
	}
	return opencode.AllEvents(ctx, path)
}
