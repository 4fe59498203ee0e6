package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"nudge/internal/watch/agentdb"
)

// FileID tells whether a path still names the file a position was taken in.
type FileID struct {
	Dev, Inode uint64
	// Fingerprint is a hash of the file's first bytes (up to 256), with their
	// count: "<n>:<hash>". A file that grows keeps matching its old fingerprint.
	// "": not taken yet (a first look's position, taken from the file's size
	// alone).
	Fingerprint string
}

// fingerprintLen is how many leading bytes identify a file. Every session
// file starts with a record naming its session (docs/agents/claude.md,
// docs/agents/codex.md, docs/agents/kimi.md), so two files rarely share their first 256 bytes.
const fingerprintLen = 256

// markLen is how many bytes just before a position are fingerprinted with
// it: a file is read on from a stored position only while they are
// unchanged (docs/durability.md).
const markLen = 256

// fingerprint hashes n bytes of a file: its first ones, or those just
// before a position (a mark). n < 0 matches nothing; n = 0 matches anything
// (a mark stored before marks existed).
type fingerprint struct {
	n   int
	sum uint64
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv1a(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

func fingerprintOf(b []byte) fingerprint {
	return fingerprint{n: len(b), sum: fnv1a(fnvOffset, b)}
}

func (f fingerprint) String() string { return fmt.Sprintf("%d:%016x", f.n, f.sum) }

// parseFingerprint reads a stored fingerprint; a malformed one matches no file.
func parseFingerprint(s string) fingerprint {
	n, sum, ok := strings.Cut(s, ":")
	count, err1 := strconv.Atoi(n)
	hash, err2 := strconv.ParseUint(sum, 16, 64)
	if !ok || err1 != nil || err2 != nil || count < 0 || count > max(fingerprintLen, markLen) {
		return fingerprint{n: -1}
	}
	return fingerprint{n: count, sum: hash}
}

// matches reports whether head, the first bytes of a file (up to
// fingerprintLen), starts with the bytes f was taken of.
func (f fingerprint) matches(head []byte) bool {
	return f.n >= 0 && f.n <= len(head) && fingerprintOf(head[:f.n]).sum == f.sum
}

// markString is a mark as stored: "" when there is none.
func (f fingerprint) markString() string {
	if f.n <= 0 {
		return ""
	}
	return f.String()
}

// parseMark reads a stored mark; "" (none stored) matches anything.
func parseMark(s string) fingerprint {
	if s == "" {
		return fingerprint{}
	}
	return parseFingerprint(s)
}

// lineMark is the mark of the position just after line, a line without
// its newline: its last bytes and the newline.
func lineMark(line []byte) fingerprint {
	tail := line[max(0, len(line)-(markLen-1)):]
	return fingerprint{n: len(tail) + 1, sum: fnv1a(fnv1a(fnvOffset, tail), []byte{'\n'})}
}

// readMark takes the mark of position at in f: up to markLen bytes before it.
func readMark(f *os.File, at int64) (fingerprint, error) {
	var buf [markLen]byte
	n := int(min(at, markLen))
	if _, err := f.ReadAt(buf[:n], at-int64(n)); err != nil {
		return fingerprint{n: -1}, fmt.Errorf("read the bytes before offset %d of %s: %w", at, f.Name(), err)
	}
	return fingerprintOf(buf[:n]), nil
}

// markHolds reports whether the bytes before position at in f, a file of
// size bytes, are still those m was taken of. The same read fills buf
// (at least markLen long) with what follows them, up to size: after is
// that part, the bytes from at on.
func markHolds(f *os.File, at, size int64, m fingerprint, buf []byte) (holds bool, after []byte, err error) {
	switch {
	case m.n < 0 || at > size || int64(m.n) > at:
		return false, nil, nil
	case m.n == 0:
		return true, nil, nil
	}
	from := at - int64(m.n)
	n, err := f.ReadAt(buf[:min(int64(len(buf)), size-from)], from)
	if n < m.n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return false, nil, fmt.Errorf("read the bytes before offset %d of %s: %w", at, f.Name(), err)
	}
	return fnv1a(fnvOffset, buf[:m.n]) == m.sum, buf[m.n:n], nil
}

// tail is one session file being followed. What a scan needs to tell the
// file changed, and its position with the identity of the file, are kept
// for every file; the state of reading it (reading) only while it is in
// use: from the first read of a change until it is closed idle with
// nothing left uncommitted (docs/performance.md §3).
type tail struct {
	agent string
	path  string
	src   source // reads the file (source.go)
	known bool   // dev, ino and fp describe the file the position belongs to
	// deferred: the position was taken from the file's size alone (a first
	// look); fp and mark are taken when the file first changes.
	deferred   bool
	atEnd      bool // begin at the file's end (old history on a first look)
	positioned bool // the last run stored a position for its path (Options.Positions)
	dev, ino   uint64
	fp         fingerprint
	// mark fingerprints the bytes just before the position.
	mark fingerprint
	// offset is the position while reading is nil; lines.start holds it
	// otherwise.
	offset int64
	// what the last look saw, so a scan can tell a file changed
	size      int64
	mtime     int64  // modification time, Unix nanoseconds
	seen      uint64 // the scan that last found the file
	lastBatch uint64 // the batch of the last record emitted
	*reading         // nil while the file is not in use
}

// reading is the state of a tail in use.
type reading struct {
	lines lineSplitter
	// markStale: the bytes before lines.start must be read again for the
	// mark (a line was skipped without being kept).
	markStale bool
	f         *os.File // nil while closed
	used      time.Time
	// a snapshot (snapshot.go): whether content was emitted, and its hash
	emitted bool
	content uint64 // hash
	// committed is the last position the consumer stored (Ack), or where
	// reading began.
	committed commitPoint
	// checkpoint: the next read emits the position even when it reads no line.
	checkpoint bool
	bad        *badLines // skipped lines, once there are some
	// a database (opencode_db.go): when it was last read, and what its
	// reads learned of its WAL
	dbRead time.Time
	dbWAL  *agentdb.WAL
}

// commitPoint is a position of a tail with the identity of its file.
type commitPoint struct {
	offset          int64
	mark            fingerprint
	dev, ino        uint64
	fp              fingerprint
	known, deferred bool
}

// at is where t stands: after its last complete line.
func (t *tail) at() int64 {
	if t.reading == nil {
		return t.offset
	}
	return t.lines.start
}

// point is t's position with the identity of its file.
func (t *tail) point() commitPoint {
	return t.pointAt(t.at(), t.mark)
}

// pointAt is t's position at offset, with its mark.
func (t *tail) pointAt(offset int64, mark fingerprint) commitPoint {
	return commitPoint{offset: offset, mark: mark, dev: t.dev, ino: t.ino, fp: t.fp, known: t.known, deferred: t.deferred}
}

// stored is t's last position the consumer stored: where it stands, while
// it is not in use.
func (t *tail) stored() commitPoint {
	if t.reading == nil {
		return t.point()
	}
	return t.committed
}

// warm gives t the state of reading it, at its position.
func (t *tail) warm(lineCap int) {
	if t.reading != nil {
		return
	}
	t.reading = &reading{lines: lineSplitter{max: lineCap}, committed: t.point()}
	t.lines.reset(t.offset)
}

// cool drops the state of reading t once it holds nothing a position does
// not: the file closed, no unfinished or skipped line, no checkpoint owed,
// everything emitted stored (its batches up to acked) and committed. A
// file with skipped lines keeps it for their log lines; a lasting source's
// file keeps it, its state being more than a position.
func (t *tail) cool(acked uint64) {
	r := t.reading
	if r == nil || r.f != nil || t.src.lasting() || r.bad != nil || r.checkpoint || r.markStale ||
		r.lines.skipping || r.lines.pos != r.lines.start || t.lastBatch > acked || r.committed != t.point() {
		return
	}
	t.offset, t.reading = r.lines.start, nil
}

// commit records c as t's stored position.
func (t *tail) commit(c commitPoint, lineCap int) {
	if t.reading == nil && c == t.point() {
		return
	}
	t.warm(lineCap)
	t.committed = c
}

// resetTo moves t back to c; the next read checks c's identity again.
func (t *tail) resetTo(c commitPoint, lineCap int) {
	t.warm(lineCap)
	t.lines.reset(c.offset)
	t.mark, t.markStale = c.mark, false
	t.dev, t.ino, t.fp, t.known, t.deferred = c.dev, c.ino, c.fp, c.known, c.deferred
	t.size, t.mtime = -1, 0
	t.emitted = false
}

// id is the file's identity as stored with a position; a deferred one
// has no fingerprint yet.
func (t *tail) id() FileID {
	if t.deferred {
		return FileID{Dev: t.dev, Inode: t.ino}
	}
	return FileID{Dev: t.dev, Inode: t.ino, Fingerprint: t.fp.String()}
}

// lastLineEnd finds where the line after the last complete one starts in the
// first size bytes of f, looking back at most max+1 bytes: first a few KB
// (most last lines are short), then larger pieces. It returns skip when the
// unfinished last line is already longer than max.
func lastLineEnd(f *os.File, size int64, max int) (at int64, skip bool, err error) {
	chunk := int64(4 << 10)
	buf := make([]byte, 64<<10)
	for end := size; end > 0 && size-end <= int64(max); {
		n := min(chunk, end)
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, false, fmt.Errorf("find the last line of %s: %w", f.Name(), err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			at = end - n + int64(i) + 1
			return at, size-at > int64(max), nil
		}
		end -= n
		chunk = int64(len(buf))
	}
	return 0, size > int64(max), nil
}
