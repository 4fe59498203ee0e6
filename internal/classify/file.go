package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"
)

// WholeFile is implemented by a Reader whose one record is the file's whole
// content (a live registry snapshot) rather than one line of it. An empty
// record means the file was removed.
type WholeFile interface {
	Reader
	WholeFile()
}

// Settler is implemented by a Reader that can judge a turn only once its
// file has stopped growing (Codex 0.98 rollouts write no turn end). quiet is
// how long the file has been unchanged; the events are emitted once.
type Settler interface {
	Reader
	Settle(quiet time.Duration) []Event
}

// RecordSource is implemented by a Reader whose file is not lines of text
// (an SQLite database, a live server): it lists the file's records itself,
// in the form the watcher hands them out.
type RecordSource interface {
	Reader
	Records(path string) ([][]byte, error)
}

// MaxRecordBytes caps one record: longer lines are skipped (Claude Code
// writes multi-MB lines on /compact, formats/claude.md §3).
const MaxRecordBytes = 8 << 20

// ReadFile classifies the file at path with a fresh Reader of agent: line by
// line, or as one record for a WholeFile reader. It serves `nudge classify`
// and golden tests.
func ReadFile(path string, agent Agent) ([]Event, error) {
	if src, ok := agent.NewReader(path).(RecordSource); ok {
		records, err := src.Records(path)
		var events []Event
		for _, rec := range records {
			events = append(events, src.Read(rec)...)
		}
		if err != nil {
			return events, fmt.Errorf("classify %s: %w", path, err)
		}
		if s, ok := src.(Settler); ok {
			if info, err := os.Stat(path); err == nil {
				events = append(events, s.Settle(time.Since(info.ModTime()))...)
			}
		}
		return events, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("classify %s: %w", path, err)
	}
	defer f.Close()
	r := agent.NewReader(path)
	if _, whole := r.(WholeFile); whole {
		data, err := io.ReadAll(io.LimitReader(f, MaxRecordBytes+1))
		if err != nil {
			return nil, fmt.Errorf("classify %s: %w", path, err)
		}
		if len(data) > MaxRecordBytes {
			return nil, fmt.Errorf("classify %s: record over %d bytes", path, MaxRecordBytes)
		}
		return r.Read(data), nil
	}
	var events []Event
	err = eachRecord(f, MaxRecordBytes, func(line []byte) {
		events = append(events, r.Read(line)...)
	}, func(n int) {
		slog.Warn("classify: skipped a line over the cap", "file", path, "bytes", n, "cap", MaxRecordBytes)
	})
	if err != nil {
		return events, fmt.Errorf("classify %s: %w", path, err)
	}
	if s, ok := r.(Settler); ok {
		if info, err := f.Stat(); err == nil {
			events = append(events, s.Settle(time.Since(info.ModTime()))...)
		}
	}
	return events, nil
}

// eachRecord calls record for every non-empty line of r of at most max
// bytes (without its line ending; the slice is reused) and skipped with the
// length of each longer one. A last line without a newline counts.
func eachRecord(r io.Reader, max int, record func([]byte), skipped func(int)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	n, over := 0, false // the whole line's length; whether it passed the cap
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if !over {
			if len(line)+len(chunk) > max+2 { // +2: a "\r\n" ending is not part of the record
				over, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if rec := bytes.TrimRight(line, "\r\n"); over || len(rec) > max {
			skipped(n)
		} else if len(rec) > 0 {
			record(rec)
		}
		line, n, over = line[:0], 0, false
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// decodeRecord decodes one record into v, tolerating fields of an
// unexpected type (they are skipped; the rest still counts). It reports
// false for a record that is not JSON at all.
func decodeRecord(data []byte, v any) bool {
	err := json.Unmarshal(data, v)
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}
