package proc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// The records macOS's sysctl hands out (sys/sysctl.h, sys/proc.h), parsed
// without I/O: proc_darwin.go asks for them and checks, as it compiles,
// that these offsets are those of golang.org/x/sys/unix.KinfoProc; the
// tests run on every OS. Both Mac architectures are 64-bit little-endian.

// Offsets in a struct kinfo_proc {struct extern_proc kp_proc; struct eproc
// kp_eproc}, 648 bytes.
const (
	kinfoSize      = 648
	kinfoStartSec  = 0   // kp_proc.p_starttime.tv_sec, int64
	kinfoStartUsec = 8   // kp_proc.p_starttime.tv_usec, int32
	kinfoStat      = 36  // kp_proc.p_stat, char
	kinfoPID       = 40  // kp_proc.p_pid, int32
	kinfoComm      = 243 // kp_proc.p_comm, char[17]
	kinfoCommLen   = 17
	kinfoRUID      = 392 // kp_eproc.e_pcred.p_ruid, uint32
	kinfoUID       = 420 // kp_eproc.e_ucred.cr_uid (effective), uint32
	kinfoPPID      = 560 // kp_eproc.e_ppid, int32
	kinfoTdev      = 572 // kp_eproc.e_tdev, int32
)

const (
	// sZomb is p_stat of a zombie (sys/proc.h SZOMB).
	sZomb = 5
	// noDev is e_tdev of a process without a terminal (NODEV).
	noDev = -1
)

// kinfo is what nudge reads of one struct kinfo_proc.
type kinfo struct {
	pid, ppid  int
	ruid, euid uint32
	zombie     bool
	tty        string // e_tdev in decimal, "" for none
	started    string // p_starttime as "seconds.micros"
	name       string
}

// parseKinfos reads the array of struct kinfo_proc that sysctl
// kern.proc.* returns.
func parseKinfos(buf []byte) ([]kinfo, error) {
	if len(buf)%kinfoSize != 0 {
		return nil, fmt.Errorf("process table of %d bytes is not a list of %d-byte records", len(buf), kinfoSize)
	}
	le := binary.LittleEndian
	out := make([]kinfo, 0, len(buf)/kinfoSize)
	for r := buf; len(r) > 0; r = r[kinfoSize:] {
		k := kinfo{
			pid:    int(int32(le.Uint32(r[kinfoPID:]))),
			ppid:   int(int32(le.Uint32(r[kinfoPPID:]))),
			ruid:   le.Uint32(r[kinfoRUID:]),
			euid:   le.Uint32(r[kinfoUID:]),
			zombie: r[kinfoStat] == sZomb,
			started: strconv.FormatInt(int64(le.Uint64(r[kinfoStartSec:])), 10) + "." +
				fmt.Sprintf("%06d", int32(le.Uint32(r[kinfoStartUsec:]))),
		}
		comm := r[kinfoComm : kinfoComm+kinfoCommLen]
		if i := bytes.IndexByte(comm, 0); i >= 0 {
			comm = comm[:i]
		}
		k.name = string(comm)
		if tdev := int32(le.Uint32(r[kinfoTdev:])); tdev != noDev {
			k.tty = strconv.FormatUint(uint64(uint32(tdev)), 10)
		}
		out = append(out, k)
	}
	return out, nil
}

// parseProcArgs reads the KERN_PROCARGS2 buffer of a process: argc (int32),
// the executable's path, NULs up to the aligned start of argv, argc
// NUL-terminated arguments, then the NUL-terminated environment up to an
// empty string (what follows is the kernel's own "apple" strings).
func parseProcArgs(buf []byte) (args, env []string, err error) {
	if len(buf) < 4 {
		return nil, nil, errors.New("argument area shorter than its count")
	}
	argc := int32(binary.LittleEndian.Uint32(buf))
	rest := buf[4:]
	if argc < 0 || int(argc) > len(rest) {
		return nil, nil, fmt.Errorf("argument count %d in an area of %d bytes", argc, len(buf))
	}
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil, nil, errors.New("argument area ends inside the executable's path")
	}
	rest = bytes.TrimLeft(rest[i:], "\x00")
	for len(args) < int(argc) {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return nil, nil, fmt.Errorf("argument area ends after %d of %d arguments", len(args), argc)
		}
		args, rest = append(args, string(rest[:i])), rest[i+1:]
	}
	for {
		i := bytes.IndexByte(rest, 0)
		if i <= 0 {
			return args, env, nil
		}
		env, rest = append(env, string(rest[:i])), rest[i+1:]
	}
}
