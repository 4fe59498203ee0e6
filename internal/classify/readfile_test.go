package classify

import (
	"context"
	"fmt"
	"os"
	"time"

	"nudge/internal/watch/disk"
	"nudge/internal/watch/opencode"
)

// readFile classifies a sample file at once with a fresh Reader of agent,
// as `nudge classify` does (internal/watch.ReadFile, which imports this
// package): the event rows of an OpenCode database or the file's
// content, then a Settler settled by how long the file has been unchanged.
func readFile(path string, agent Agent) ([]Event, error) {
	r := agent.NewReader(path, disk.Files{})
	var (
		events []Event
		err    error
	)
	if _, listed := r.(Listed); listed {
		var rows [][]byte
		rows, err = opencode.AllEvents(context.Background(), path)
		for _, row := range rows {
			events = append(events, r.Read(row)...)
		}
	} else {
		var f *os.File
		if f, err = os.Open(path); err != nil {
			return nil, fmt.Errorf("classify %s: %w", path, err)
		}
		defer f.Close()
		events, err = ReadRecords(r, f, func(int) {})
	}
	if err != nil {
		return events, fmt.Errorf("classify %s: %w", path, err)
	}
	if s, ok := r.(Settler); ok {
		if info, err := os.Stat(path); err == nil {
			events = append(events, s.Settle(time.Since(info.ModTime()))...)
		}
	}
	return events, nil
}
