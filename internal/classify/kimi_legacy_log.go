package classify

import (
	"bytes"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The legacy kimi-cli writes a dead turn's cause only in logs/kimi.log
// (docs/agents/kimi.md B3). Both readers of one root share a kimiLogBook: the log
// reader files the lines that matter by session as it tails the log, and the
// wire reader looks its failed turn up there. The two files are tailed
// independently and the log line is written just before the wire records, so
// on a miss the book reads the end of the log files, through the wire
// reader's Files.

// kimiLogKind is what a log line says about a turn.
type kimiLogKind int

const (
	// kimiLogFailed: "Agent step N failed: <ErrorType>: <text> (request_id=…)".
	kimiLogFailed kimiLogKind = 1 << iota
	// kimiLogCancelled: "Cancelled by user" / "Interrupted by user".
	kimiLogCancelled
	// kimiLogMaxSteps: "Max steps reached: N".
	kimiLogMaxSteps
)

// kimiLogStopped are the kinds that end a turn without StepInterrupted (B4).
const kimiLogStopped = kimiLogCancelled | kimiLogMaxSteps

// kimiLogLine is one filed log record.
type kimiLogLine struct {
	at        time.Time
	kind      kimiLogKind
	errType   string // "APIStatusError"
	status    int    // from "Error code: 503"
	text      string // the message after "failed: " without the request id
	requestID string
}

// kimiLogZone is the zone of the log's times: the machine's, as the CLI
// writes local time without a zone (B3 rule 3).
var kimiLogZone = time.Local

const (
	// kimiLogPairWindow is how far a log line may be from its wire record (B3 rule 2).
	kimiLogPairWindow = 2 * time.Second
	// kimiLogTail is how much of the end of each log file a miss reads.
	kimiLogTail = 1 << 20
	// kimiLogSessions and kimiLogPerSession bound a book's memory.
	kimiLogSessions   = 256
	kimiLogPerSession = 16
)

var (
	// kimiLogRecord is `{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {module}:{function}:{line} | {sid} - {message}` (B3).
	kimiLogRecord  = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}) \| *[A-Z]+ *\| [^|]* \| (\S+) - (.*)$`)
	kimiStepFailed = regexp.MustCompile(`^Agent step \d+ failed: ([A-Za-z_][\w.]*): (.*?)(?: \(request_id=([^)]*)\))?$`)
	kimiErrorCode  = regexp.MustCompile(`Error code: (\d{3})\b`)
)

// parseKimiLogLine files one log line, or returns false for lines that say
// nothing about a turn's end (retries, tracebacks, continuation lines).
func parseKimiLogLine(line []byte) (sid string, l kimiLogLine, ok bool) {
	m := kimiLogRecord.FindSubmatch(bytes.TrimRight(line, "\r\n"))
	if m == nil {
		return "", l, false
	}
	at, err := time.ParseInLocation("2006-01-02 15:04:05.000", string(m[1]), kimiLogZone)
	if err != nil {
		return "", l, false
	}
	sid, msg := string(m[2]), string(m[3])
	l.at = at
	switch {
	case strings.HasPrefix(msg, "Agent step "):
		f := kimiStepFailed.FindStringSubmatch(msg)
		if f == nil {
			return "", l, false
		}
		l.kind, l.errType, l.text, l.requestID = kimiLogFailed, f[1], f[2], f[3]
		if c := kimiErrorCode.FindStringSubmatch(f[2]); c != nil {
			l.status, _ = strconv.Atoi(c[1])
		}
	case strings.Contains(msg, "Cancelled by user"), strings.Contains(msg, "Interrupted by user"):
		l.kind, l.text = kimiLogCancelled, msg
	case strings.HasPrefix(msg, "Max steps reached"):
		l.kind, l.text = kimiLogMaxSteps, msg
	default:
		return "", l, false
	}
	return sid, l, true
}

// code is the error type with the status ("APIStatusError/503").
func (l *kimiLogLine) code() string {
	switch l.kind {
	case kimiLogCancelled:
		return "cancelled"
	case kimiLogMaxSteps:
		return "max_steps"
	}
	if l.status != 0 {
		return l.errType + "/" + strconv.Itoa(l.status)
	}
	return l.errType
}

// kimiLogBook is one legacy root's filed log lines, by session id.
type kimiLogBook struct {
	root string

	mu    sync.Mutex
	fed   bool // a log reader has filed lines: misses are rarer than scans
	lines map[string][]kimiLogLine
	order []string         // sessions by first filing, to bound memory
	sizes map[string]int64 // each log file's size at the last scan: an unchanged file is not read again
}

var kimiLogBooks = struct {
	sync.Mutex
	byRoot map[string]*kimiLogBook
}{byRoot: map[string]*kimiLogBook{}}

// kimiLogBookFor returns the shared book of the legacy root.
func kimiLogBookFor(root string) *kimiLogBook {
	root = filepath.Clean(root)
	kimiLogBooks.Lock()
	defer kimiLogBooks.Unlock()
	b, ok := kimiLogBooks.byRoot[root]
	if !ok {
		b = &kimiLogBook{root: root, lines: map[string][]kimiLogLine{}}
		kimiLogBooks.byRoot[root] = b
	}
	return b
}

// file adds a line once; the caller holds b.mu.
func (b *kimiLogBook) file(sid string, l kimiLogLine) {
	have, seen := b.lines[sid]
	for _, h := range have {
		if h == l {
			return
		}
	}
	if !seen {
		b.order = append(b.order, sid)
		if len(b.order) > kimiLogSessions {
			delete(b.lines, b.order[0])
			b.order = b.order[1:]
		}
	}
	have = append(have, l)
	if len(have) > kimiLogPerSession {
		have = have[len(have)-kimiLogPerSession:]
	}
	b.lines[sid] = have
}

// find returns the filed line of sid of one of kinds closest to at, within
// the pairing window (or an hour off it, for a clock that jumped at a DST
// change between the two writes; B3 rule 3). On a miss it reads the end of
// the log files in files when scanOnMiss is set or no log reader feeds the
// book.
func (b *kimiLogBook) find(files Files, sid string, at time.Time, kinds kimiLogKind, scanOnMiss bool) *kimiLogLine {
	b.mu.Lock()
	defer b.mu.Unlock()
	if l := b.lookup(sid, at, kinds); l != nil {
		return l
	}
	if !scanOnMiss && b.fed {
		return nil
	}
	b.scan(files)
	return b.lookup(sid, at, kinds)
}

func (b *kimiLogBook) lookup(sid string, at time.Time, kinds kimiLogKind) *kimiLogLine {
	var best *kimiLogLine
	bestOff := time.Duration(1<<63 - 1)
	for i := range b.lines[sid] {
		l := &b.lines[sid][i]
		if l.kind&kinds == 0 {
			continue
		}
		off := l.at.Sub(at).Abs()
		if off > kimiLogPairWindow {
			off = (off - time.Hour).Abs() + time.Nanosecond // an exact match beats a DST one
		}
		if off <= kimiLogPairWindow && off < bestOff {
			best, bestOff = l, off
		}
	}
	if best == nil {
		return nil
	}
	found := *best
	return &found
}

// scan files the lines at the end of kimi.log and of its rotated copies
// (kimi.*.log; B3 rule 4) that changed since the last scan, so that a wire
// file's history of many turns does not read the logs once per turn; the
// caller holds b.mu.
func (b *kimiLogBook) scan(files Files) {
	logs, _ := files.Glob(filepath.Join(b.root, "logs", "kimi*.log"))
	sort.Strings(logs)
	sizes := make(map[string]int64, len(logs))
	for _, path := range logs {
		if !isKimiLogPath(path) {
			continue
		}
		size, err := files.Size(path)
		if err != nil {
			continue
		}
		sizes[path] = size
		if was, seen := b.sizes[path]; !seen || was != size {
			b.scanFile(files, path)
		}
	}
	b.sizes = sizes
}

func (b *kimiLogBook) scanFile(files Files, path string) {
	data, err := files.ReadTail(path, kimiLogTail)
	if err != nil {
		return
	}
	// A first, partial line does not parse as a record and is skipped.
	_ = eachRecord(bytes.NewReader(data), MaxRecordBytes, func(line []byte) {
		if sid, l, ok := parseKimiLogLine(line); ok {
			b.file(sid, l)
		}
	}, func(int) {})
}

// kimiLogReader tails logs/kimi.log into its root's book. It gives no
// events: a log line only explains a turn the wire ended.
type kimiLogReader struct{ book *kimiLogBook }

func newKimiLogReader(path string) *kimiLogReader {
	return &kimiLogReader{book: kimiLogBookFor(filepath.Dir(filepath.Dir(path)))}
}

// Read files one log line.
func (r *kimiLogReader) Read(line []byte) []Event {
	sid, l, ok := parseKimiLogLine(line)
	r.book.mu.Lock()
	defer r.book.mu.Unlock()
	r.book.fed = true
	if ok {
		r.book.file(sid, l)
	}
	return nil
}
