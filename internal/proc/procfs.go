package proc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// The formats of Linux's /proc (proc(5)), parsed without I/O: proc_linux.go
// reads the files, and the tests run on every OS.

// stat is what nudge reads of /proc/<pid>/stat.
type stat struct {
	name    string // comm, between the first '(' and the last ')'
	state   byte
	ppid    int
	tty     string // tty_nr in decimal, "" for none
	started string // starttime (field 22), clock ticks since boot
}

// parseStat reads /proc/<pid>/stat: "pid (comm) state ppid pgrp session
// tty_nr tpgid flags … starttime …". The command name may hold spaces and
// parentheses, so the fields are counted from the last ')'.
func parseStat(data []byte) (stat, error) {
	open := bytes.IndexByte(data, '(')
	end := bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return stat{}, fmt.Errorf("malformed stat %.80q", data)
	}
	f := strings.Fields(string(data[end+1:]))
	const first = 3 // f[0] is proc(5)'s field 3, state
	const (         // field numbers of proc(5), counted from state
		state     = 3 - first
		ppid      = 4 - first
		ttyNr     = 7 - first
		startTime = 22 - first
	)
	if len(f) <= startTime || len(f[state]) != 1 {
		return stat{}, fmt.Errorf("short stat %.80q", data)
	}
	parent, err := strconv.Atoi(f[ppid])
	if err != nil {
		return stat{}, fmt.Errorf("stat parent %q: %w", f[ppid], err)
	}
	if _, err := strconv.ParseUint(f[startTime], 10, 64); err != nil {
		return stat{}, fmt.Errorf("stat start time %q: %w", f[startTime], err)
	}
	if _, err := strconv.ParseInt(f[ttyNr], 10, 64); err != nil {
		return stat{}, fmt.Errorf("stat terminal %q: %w", f[ttyNr], err)
	}
	s := stat{name: string(data[open+1 : end]), state: f[state][0], ppid: parent, started: f[startTime]}
	if f[ttyNr] != "0" {
		s.tty = f[ttyNr]
	}
	return s, nil
}

// gone reports a zombie or a dead task: it holds nothing any more.
func (s stat) gone() bool { return s.state == 'Z' || s.state == 'X' || s.state == 'x' }

// parseUIDs reads the real and effective user ids from /proc/<pid>/status
// ("Uid:\treal\teffective\tsaved\tfs").
func parseUIDs(status []byte) (real, effective uint32, err error) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("Uid:"))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) < 2 {
			break
		}
		r, err1 := strconv.ParseUint(f[0], 10, 32)
		e, err2 := strconv.ParseUint(f[1], 10, 32)
		if err := errors.Join(err1, err2); err != nil {
			return 0, 0, fmt.Errorf("status uids %q: %w", rest, err)
		}
		return uint32(r), uint32(e), nil
	}
	return 0, 0, errors.New("status has no Uid line")
}

// splitNUL splits NUL-terminated strings (cmdline, environ); nil for none.
func splitNUL(data []byte) []string {
	data = bytes.TrimRight(data, "\x00")
	if len(data) == 0 {
		return nil
	}
	return strings.Split(string(data), "\x00")
}

// socketInode reads the inode of a "socket:[12345]" fd link.
func socketInode(link string) (uint64, bool) {
	v, ok := strings.CutPrefix(link, "socket:[")
	if !ok || !strings.HasSuffix(v, "]") {
		return 0, false
	}
	n, err := strconv.ParseUint(v[:len(v)-1], 10, 64)
	return n, err == nil
}

// listener is one listening TCP socket of /proc/net/tcp or tcp6.
type listener struct {
	inode uint64
	addr  netip.AddrPort
}

// tcpListen is the state number of a listening socket (include/net/tcp_states.h).
const tcpListen = 0x0A

// parseListeners reads the LISTEN rows of /proc/net/tcp or /proc/net/tcp6:
// "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode".
// An address is the kernel's 32-bit words in hex, each in host byte order;
// the port is plain hex. Malformed rows are skipped.
func parseListeners(data []byte) []listener {
	var out []listener
	for line := range bytes.Lines(data) {
		f := strings.Fields(string(line))
		if len(f) < 10 || !strings.HasSuffix(f[0], ":") {
			continue // the header, or not a row
		}
		if st, err := strconv.ParseUint(f[3], 16, 8); err != nil || st != tcpListen {
			continue
		}
		host, port, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		ip, ok := parseHexIP(host)
		p, err := strconv.ParseUint(port, 16, 16)
		inode, err2 := strconv.ParseUint(f[9], 10, 64)
		if !ok || err != nil || err2 != nil {
			continue
		}
		out = append(out, listener{inode: inode, addr: netip.AddrPortFrom(ip, uint16(p))})
	}
	return out
}

// parseHexIP reads an address of /proc/net/tcp{,6}: 8 or 32 hex digits,
// 32-bit words in host byte order.
func parseHexIP(s string) (netip.Addr, bool) {
	if len(s) != 8 && len(s) != 32 {
		return netip.Addr{}, false
	}
	var b [16]byte
	for i := 0; i < len(s)/8; i++ {
		w, err := strconv.ParseUint(s[i*8:i*8+8], 16, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		binary.NativeEndian.PutUint32(b[i*4:], uint32(w))
	}
	if len(s) == 8 {
		return netip.AddrFrom4([4]byte(b[:4])), true
	}
	return netip.AddrFrom16(b).Unmap(), true
}
