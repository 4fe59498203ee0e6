//go:build darwin

package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// self is the user id every process nudge looks at runs as.
var self = uint32(os.Getuid())

// The offsets sysctl.go reads must be those of unix.KinfoProc: each line
// fails to compile when they differ (a negative array length).
var kp unix.KinfoProc

const eproc = unsafe.Offsetof(kp.Eproc)

var (
	_ = [1]int{}[unsafe.Sizeof(kp)-kinfoSize]
	_ = [1]int{}[unsafe.Offsetof(kp.Proc.P_starttime)-kinfoStartSec]
	_ = [1]int{}[unsafe.Offsetof(kp.Proc.P_starttime)+unsafe.Offsetof(kp.Proc.P_starttime.Usec)-kinfoStartUsec]
	_ = [1]int{}[unsafe.Offsetof(kp.Proc.P_stat)-kinfoStat]
	_ = [1]int{}[unsafe.Offsetof(kp.Proc.P_pid)-kinfoPID]
	_ = [1]int{}[unsafe.Offsetof(kp.Proc.P_comm)-kinfoComm]
	_ = [1]int{}[unsafe.Sizeof(kp.Proc.P_comm)-kinfoCommLen]
	_ = [1]int{}[eproc+unsafe.Offsetof(kp.Eproc.Pcred)+unsafe.Offsetof(kp.Eproc.Pcred.P_ruid)-kinfoRUID]
	_ = [1]int{}[eproc+unsafe.Offsetof(kp.Eproc.Ucred)+unsafe.Offsetof(kp.Eproc.Ucred.Uid)-kinfoUID]
	_ = [1]int{}[eproc+unsafe.Offsetof(kp.Eproc.Ppid)-kinfoPPID]
	_ = [1]int{}[eproc+unsafe.Offsetof(kp.Eproc.Tdev)-kinfoTdev]
)

// sysctl returns the raw value of a kern.proc.* or kern.procargs2 name,
// asking again when the table grew between measuring and reading it.
func sysctl(name string, arg int) ([]byte, error) {
	for range 5 {
		b, err := unix.SysctlRaw(name, arg)
		if !errors.Is(err, unix.ENOMEM) {
			return b, err
		}
	}
	return nil, fmt.Errorf("sysctl %s: the table keeps growing", name)
}

func (k kinfo) process() Process {
	return Process{PID: k.pid, PPID: k.ppid, Started: k.started, TTY: k.tty, Name: k.name}
}

// List returns every process of the person (sysctl kern.proc.uid, which
// matches the effective uid; the real one is checked here), with its
// arguments. Processes that end while it reads are left out.
func List(ctx context.Context) ([]Process, error) {
	buf, err := sysctl("kern.proc.uid", int(self))
	if err != nil {
		return nil, fmt.Errorf("reading the process table: %w", err)
	}
	ks, err := parseKinfos(buf)
	if err != nil {
		return nil, fmt.Errorf("reading the process table: %w", err)
	}
	var out []Process
	for _, k := range ks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if k.ruid != self || k.euid != self || k.zombie {
			continue
		}
		p := k.process()
		if p.Args, _, err = procArgs(p); err == nil && len(p.Args) > 0 {
			out = append(out, p)
		}
	}
	return out, nil
}

// Get reads the person's process pid, without its arguments.
func Get(pid int) (Process, error) {
	if pid <= 0 {
		return Process{}, gone(pid)
	}
	buf, err := sysctl("kern.proc.pid", pid)
	if err != nil {
		return Process{}, fmt.Errorf("process %d: %w", pid, err)
	}
	ks, err := parseKinfos(buf)
	switch {
	case err != nil:
		return Process{}, fmt.Errorf("process %d: %w", pid, err)
	case len(ks) == 0 || ks[0].pid != pid || ks[0].zombie:
		return Process{}, gone(pid)
	case ks[0].ruid != self || ks[0].euid != self:
		return Process{}, notMine(pid)
	}
	return ks[0].process(), nil
}

// procArgs reads p's arguments and environment (sysctl kern.procargs2),
// then makes sure p's pid still names the same run.
func procArgs(p Process) (args, env []string, err error) {
	buf, err := sysctl("kern.procargs2", p.PID)
	if err != nil {
		return nil, nil, fmt.Errorf("process %d: arguments: %w", p.PID, err)
	}
	if now, err := Get(p.PID); err != nil || now.Started != p.Started {
		return nil, nil, gone(p.PID)
	}
	args, env, err = parseProcArgs(buf)
	if err != nil {
		return nil, nil, fmt.Errorf("process %d: %w", p.PID, err)
	}
	return args, env, nil
}

// Args returns the command line of the person's process pid.
func Args(pid int) ([]string, error) {
	p, err := Get(pid)
	if err != nil {
		return nil, err
	}
	args, _, err := procArgs(p)
	return args, err
}

// Env returns the environment the person's process pid was started with.
func Env(pid int) ([]string, error) {
	p, err := Get(pid)
	if err != nil {
		return nil, err
	}
	_, env, err := procArgs(p)
	return env, err
}

// lsof runs lsof's field output for the person's process pid; macOS has no
// sysctl for a process's files, and libproc needs cgo (docs/mac.md). It runs
// only when a delivery or `nudge doctor` asks.
func lsof(ctx context.Context, pid int, args ...string) ([]byte, error) {
	if _, err := Get(pid); err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, "lsof", append([]string{"-a", "-p", strconv.Itoa(pid)}, args...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("process %d: lsof: %w", pid, err)
	}
	return out, nil
}

// Cwd returns the working folder of the person's process pid, from lsof.
func Cwd(ctx context.Context, pid int) (string, error) {
	out, err := lsof(ctx, pid, "-d", "cwd", "-Fn")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "n"); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("process %d: lsof names no working folder", pid)
}

// HoldsOpen reports whether lsof lists the file at path among the person's
// process pid's open files.
func HoldsOpen(ctx context.Context, pid int, path string) (bool, error) {
	out, err := lsof(ctx, pid, "-Fn")
	if err != nil {
		return false, err
	}
	for line := range strings.Lines(string(out)) {
		if strings.TrimSpace(line) == "n"+path {
			return true, nil
		}
	}
	return false, nil
}

// Listening cannot be answered without cgo (proc_pidfdinfo) or lsof:
// errors.ErrUnsupported; callers fall back to the command line.
func Listening(pid int) ([]netip.AddrPort, error) {
	return nil, fmt.Errorf("listening sockets of process %d: %w", pid, errors.ErrUnsupported)
}

// OnTTY reports whether p's controlling terminal is the device at path.
func OnTTY(p Process, path string) (bool, error) {
	if p.TTY == "" {
		return false, nil
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false, fmt.Errorf("terminal %s: %w", path, err)
	}
	return strconv.FormatUint(uint64(uint32(st.Rdev)), 10) == p.TTY, nil
}

// TTYPath is the device path of p's controlling terminal ("/dev/ttys003"):
// the terminal device in /dev with its number; "" when it has none.
func TTYPath(p Process) string {
	if p.TTY == "" {
		return ""
	}
	names, _ := filepath.Glob("/dev/ttys*")
	for _, name := range append(names, "/dev/console") {
		if same, _ := OnTTY(p, name); same {
			return name
		}
	}
	return ""
}

// PeerUID is not told on macOS without cgo: errors.ErrUnsupported, and the
// peer counts as a stranger (docs/mac.md).
func PeerUID(netip.AddrPort, netip.AddrPort) (int, error) {
	return 0, fmt.Errorf("peer of a connection: %w", errors.ErrUnsupported)
}
