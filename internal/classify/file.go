package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// SettleAfter is how long the file must have stayed unchanged when
	// Settle is next asked, now that it has been for quiet; 0 when nothing
	// waits to be judged.
	SettleAfter(quiet time.Duration) time.Duration
	Settle(quiet time.Duration) []Event
}

// Listed is implemented by a Reader whose records are not the lines of a
// file: the event rows of an agent's database (FileKind Database) or a live
// server's picture of a session. internal/watch lists its records.
type Listed interface {
	Reader
	Listed()
}

// MaxRecordBytes caps one record: longer lines are skipped (Claude Code
// writes multi-MB lines on /compact, docs/agents/claude.md §3).
const MaxRecordBytes = 8 << 20

// ReadRecords classifies content, the bytes of one file, with r: line by
// line, or as one record for a WholeFile reader. skipped is told the length
// of each line over MaxRecordBytes, which is not classified.
func ReadRecords(r Reader, content io.Reader, skipped func(n int)) ([]Event, error) {
	if _, whole := r.(WholeFile); whole {
		data, err := io.ReadAll(io.LimitReader(content, MaxRecordBytes+1))
		if err != nil {
			return nil, err
		}
		if len(data) > MaxRecordBytes {
			return nil, fmt.Errorf("record over %d bytes", MaxRecordBytes)
		}
		return r.Read(data), nil
	}
	var events []Event
	err := eachRecord(content, MaxRecordBytes, func(line []byte) {
		events = append(events, r.Read(line)...)
	}, skipped)
	return events, err
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
