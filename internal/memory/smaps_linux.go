package memory

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// span is a range of addresses, [start, end).
type span struct{ start, end uintptr }

// codeFiles reads the text of /proc/self/maps (or smaps) and returns the
// files that hold code: those with a mapping that can run, and not
// replaced since (" (deleted)").
func codeFiles(maps io.Reader) (map[string]bool, error) {
	code := map[string]bool{}
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		if _, perms, path, ok := mapping(sc.Bytes()); ok && perms[2] == 'x' && len(path) > 0 && path[0] == '/' && !bytes.HasSuffix(path, []byte(" (deleted)")) {
			code[string(path)] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the mappings: %w", err)
	}
	return code, nil
}

// codeSpans reads the text of /proc/self/smaps and returns the mappings of
// the code files in code that can only have been read: private, not
// writable, and without a page of their own, in memory or swapped out
// ("Anonymous: 0 kB" and "Swap: 0 kB", both read; a page written once, as
// a relocation does, is the process's own). Dropping such a mapping's
// pages loses nothing: the next use maps them again from the file, from
// the page cache while it holds them. A file replaced since it was mapped
// (" (deleted)") is not the one in code, and is left alone.
func codeSpans(smaps io.Reader, code map[string]bool) ([]span, error) {
	var (
		out []span
		cur mappingRecord
	)
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Bytes()
		if s, perms, path, ok := mapping(line); ok {
			if cur.onlyRead() {
				out = append(out, cur.span)
			}
			cur = mappingRecord{span: s, candidate: perms[1] == '-' && perms[3] == 'p' && code[string(path)]}
			continue
		}
		cur.field(bytes.Fields(line))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the mappings: %w", err)
	}
	if cur.onlyRead() {
		out = append(out, cur.span)
	}
	return out, nil
}

// mappingRecord is what smaps says of one mapping, as far as codeSpans
// asks.
type mappingRecord struct {
	span
	candidate          bool // private and not writable, of a code file
	anonRead, swapRead bool // its "Anonymous:" and "Swap:" lines were read
	ownPage            bool // one of them counts a page
}

// field takes one "Key: value kB" line of the mapping's record.
func (m *mappingRecord) field(f [][]byte) {
	if len(f) < 2 {
		return
	}
	switch string(f[0]) {
	case "Anonymous:":
		m.anonRead = true
	case "Swap:":
		m.swapRead = true
	default:
		return
	}
	if string(f[1]) != "0" {
		m.ownPage = true
	}
}

// onlyRead reports whether the mapping is a candidate whose record says,
// in full, that it holds no page of the process's own.
func (m *mappingRecord) onlyRead() bool {
	return m.candidate && m.anonRead && m.swapRead && !m.ownPage
}

// mapping parses the first line of a mapping in smaps, "start-end perms
// offset dev inode [path]": its addresses, permissions and path (which may
// hold spaces, and ends in " (deleted)" once the file is gone).
func mapping(line []byte) (s span, perms, path []byte, ok bool) {
	rest := line
	var f [5][]byte
	for i := range f {
		rest = bytes.TrimLeft(rest, " ")
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		f[i], rest = rest[:end], rest[end:]
	}
	lo, hi, cut := bytes.Cut(f[0], []byte{'-'})
	if !cut || len(f[1]) != 4 || len(f[4]) == 0 {
		return span{}, nil, nil, false
	}
	start, err1 := strconv.ParseUint(string(lo), 16, 64)
	end, err2 := strconv.ParseUint(string(hi), 16, 64)
	if err1 != nil || err2 != nil || start >= end || uint64(uintptr(end)) != end {
		return span{}, nil, nil, false
	}
	return span{uintptr(start), uintptr(end)}, f[1], bytes.TrimSpace(rest), true
}
