package watch

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
	"time"
)

// FileID tells whether a path still names the file a position was taken in.
type FileID struct {
	Dev, Inode uint64
	// Fingerprint is a hash of the file's first bytes (up to 256), with their
	// count: "<n>:<hash>". A file that grows keeps matching its old fingerprint.
	Fingerprint string
}

// fingerprintLen is how many leading bytes identify a file. Every session
// file starts with a record naming its session (formats/claude.md,
// codex.md, kimi.md), so two files rarely share their first 256 bytes.
const fingerprintLen = 256

// fingerprint hashes a file's first n bytes; n < 0 matches no file.
type fingerprint struct {
	n   int
	sum uint64
}

func fingerprintOf(head []byte) fingerprint {
	h := fnv.New64a()
	h.Write(head)
	return fingerprint{n: len(head), sum: h.Sum64()}
}

func (f fingerprint) String() string { return fmt.Sprintf("%d:%016x", f.n, f.sum) }

// parseFingerprint reads a stored fingerprint; a malformed one matches no file.
func parseFingerprint(s string) fingerprint {
	n, sum, ok := strings.Cut(s, ":")
	count, err1 := strconv.Atoi(n)
	hash, err2 := strconv.ParseUint(sum, 16, 64)
	if !ok || err1 != nil || err2 != nil || count < 0 || count > fingerprintLen {
		return fingerprint{n: -1}
	}
	return fingerprint{n: count, sum: hash}
}

// matches reports whether head, the first bytes of a file (up to
// fingerprintLen), starts with the bytes f was taken of.
func (f fingerprint) matches(head []byte) bool {
	return f.n >= 0 && f.n <= len(head) && fingerprintOf(head[:f.n]).sum == f.sum
}

// tail is one session file being followed.
type tail struct {
	agent    string
	path     string
	snapshot bool
	database bool // an SQLite database (opencode_db.go)
	host     bool // a trigger whose session is asked of its host (host.go)
	dev, ino uint64
	fp       fingerprint
	known    bool // dev, ino and fp describe the file the position belongs to
	atEnd    bool // begin after the last complete line (old history on a first run)
	lines    lineSplitter
	f        *os.File // nil while closed
	used     time.Time
	// what the last look saw, so a scan can tell a file changed
	size  int64
	mtime time.Time
	seen  uint64 // the scan that last found the file
	// snapshot files: whether content was emitted, and its hash
	emitted bool
	content uint64 // hash
}

// id is the file's identity as stored with a position.
func (t *tail) id() FileID {
	return FileID{Dev: t.dev, Inode: t.ino, Fingerprint: t.fp.String()}
}

// lastLineEnd finds where the line after the last complete one starts in the
// first size bytes of f, looking back at most max+1 bytes. It returns skip
// when the unfinished last line is already longer than max.
func lastLineEnd(f *os.File, size int64, max int) (at int64, skip bool, err error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end := size; end > 0 && size-end <= int64(max); {
		n := min(int64(chunk), end)
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, false, fmt.Errorf("find the last line of %s: %w", f.Name(), err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			at = end - n + int64(i) + 1
			return at, size-at > int64(max), nil
		}
		end -= n
	}
	return 0, size > int64(max), nil
}
