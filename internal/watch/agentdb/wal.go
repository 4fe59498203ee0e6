package agentdb

import (
	"bufio"
	"encoding/binary"
	"io"
	"io/fs"
	"maps"
	"os"
)

// WAL is what the reads of one database learned of its write-ahead log:
// where the newest committed frame of each page is. Kept from one Open to
// the next, it makes a read cost the frames committed since the last one:
// SQLite, with no -shm file to share, would read and checksum the whole
// log on every open. The zero WAL knows nothing yet.
//
// SQLite is shown the database as a checkpoint would leave it, the main
// file with the pages of the committed frames laid over it, and an empty
// log. The frames laid over are those SQLite's own recovery of a log
// takes: after a header whose checksum holds, each frame whose salts are
// the header's and whose running checksum holds, up to the last one that
// commits. A log started over has a new header: it is read from its start
// again. A WAL serves one reader at a time.
type WAL struct {
	main, log os.FileInfo // the files the frames are of
	head      [walHeader]byte
	pageSize  int64
	// big: the checksums read the log's words big-endian (its magic).
	big bool
	sum [2]uint32 // the running checksum after the last committed frame
	// end is where the frame after the last committed one begins.
	end int64
	pages
}

// pages is a state of the database in the log: the offset of the newest
// committed frame of each page, and the database's size in pages then
// (none: no frame is committed). A DB reads one that never changes.
type pages struct {
	at    map[uint32]int64
	count uint32
}

// The log's format (https://sqlite.org/fileformat2.html#walformat).
const (
	walHeader   = 32
	frameHeader = 24
	walMagic    = 0x377f0682 // the low bit set: big-endian checksums
	walVersion  = 3007000
)

// update brings x to the log's committed frames, given the files and the
// log's header as DB.stamp read them; log is nil when there is none.
func (x *WAL) update(log *os.File, mainInfo, logInfo os.FileInfo, head [walHeader]byte) error {
	same := x.main != nil && os.SameFile(x.main, mainInfo) &&
		x.log != nil && logInfo != nil && os.SameFile(x.log, logInfo) &&
		x.head == head && logInfo.Size() >= x.end && x.pageSize != 0
	if !same {
		*x = WAL{main: mainInfo, log: logInfo, head: head}
		if log == nil || !x.begin() {
			return nil
		}
	}
	return x.read(log)
}

// begin takes the log's header: false if SQLite would read no frame after
// it.
func (x *WAL) begin() bool {
	h := x.head[:]
	magic := binary.BigEndian.Uint32(h)
	size := binary.BigEndian.Uint32(h[8:])
	if magic&^1 != walMagic || binary.BigEndian.Uint32(h[4:]) != walVersion ||
		size < 512 || size > 1<<16 || size&(size-1) != 0 {
		return false
	}
	x.big = magic&1 == 1
	if x.checksum([2]uint32{}, h[:24]) != [2]uint32{binary.BigEndian.Uint32(h[24:]), binary.BigEndian.Uint32(h[28:])} {
		return false
	}
	x.pageSize, x.end = int64(size), walHeader
	x.sum = [2]uint32{binary.BigEndian.Uint32(h[24:]), binary.BigEndian.Uint32(h[28:])}
	return true
}

// read takes the frames committed after x.end.
func (x *WAL) read(log *os.File) error {
	r := bufio.NewReaderSize(io.NewSectionReader(log, x.end, 1<<62), 1<<16)
	frame := make([]byte, frameHeader+x.pageSize)
	sum, at := x.sum, x.end
	var pending map[uint32]int64 // frames not committed yet
	var next pages
	for {
		if _, err := io.ReadFull(r, frame); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				break
			}
			return err
		}
		if [8]byte(frame[8:16]) != [8]byte(x.head[16:24]) {
			break
		}
		pgno, commit := binary.BigEndian.Uint32(frame), binary.BigEndian.Uint32(frame[4:])
		sum = x.checksum(x.checksum(sum, frame[:8]), frame[frameHeader:])
		if pgno == 0 || sum != [2]uint32{binary.BigEndian.Uint32(frame[16:]), binary.BigEndian.Uint32(frame[20:])} {
			break
		}
		if pending == nil {
			pending = map[uint32]int64{}
		}
		pending[pgno] = at + frameHeader
		at += int64(len(frame))
		if commit != 0 {
			if next.at == nil {
				next.at = maps.Clone(x.at)
				if next.at == nil {
					next.at = map[uint32]int64{}
				}
			}
			maps.Copy(next.at, pending)
			clear(pending)
			next.count = commit
			x.sum, x.end = sum, at
		}
	}
	if next.at != nil {
		x.pages = next
	}
	return nil
}

// checksum runs SQLite's log checksum over b from s.
func (x *WAL) checksum(s [2]uint32, b []byte) [2]uint32 {
	if x.big {
		for ; len(b) >= 8; b = b[8:] {
			s[0] += binary.BigEndian.Uint32(b) + s[1]
			s[1] += binary.BigEndian.Uint32(b[4:]) + s[0]
		}
		return s
	}
	for ; len(b) >= 8; b = b[8:] {
		s[0] += binary.LittleEndian.Uint32(b) + s[1]
		s[1] += binary.LittleEndian.Uint32(b[4:]) + s[0]
	}
	return s
}

// overlay is the database file as SQLite is shown it: the main file with
// the pages of p read from the log instead.
type overlay struct {
	main, log *os.File
	info      os.FileInfo
	pageSize  int64
	pages
	off int64
}

func (o *overlay) size() int64 {
	if o.count == 0 {
		return o.info.Size()
	}
	return int64(o.count) * o.pageSize
}

func (o *overlay) Read(b []byte) (int, error) {
	n, err := o.ReadAt(b, o.off)
	o.off += int64(n)
	return n, err
}

func (o *overlay) ReadAt(b []byte, off int64) (int, error) {
	size := o.size()
	read := 0
	for len(b) > 0 {
		if off >= size {
			return read, io.EOF
		}
		n := min(int64(len(b)), size-off)
		f, at := o.main, off
		if o.count != 0 {
			n = min(n, o.pageSize-off%o.pageSize)
			if frame, ok := o.at[uint32(off/o.pageSize)+1]; ok {
				f, at = o.log, frame+off%o.pageSize
			}
		}
		m, err := f.ReadAt(b[:n], at)
		read, off, b = read+m, off+int64(m), b[m:]
		if err != nil {
			return read, err
		}
	}
	return read, nil
}

func (o *overlay) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += o.off
	case io.SeekEnd:
		offset += o.size()
	}
	if offset < 0 {
		return 0, &fs.PathError{Op: "seek", Path: mainName, Err: fs.ErrInvalid}
	}
	o.off = offset
	return offset, nil
}

func (o *overlay) Stat() (fs.FileInfo, error) { return overlayInfo{o.info, o.size()}, nil }
func (*overlay) Close() error                 { return nil }

// overlayInfo is the main file's description with the overlay's size.
type overlayInfo struct {
	os.FileInfo
	size int64
}

func (i overlayInfo) Size() int64 { return i.size }
