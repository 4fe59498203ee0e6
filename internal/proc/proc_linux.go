//go:build linux

package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// self is the user id every process nudge looks at runs as.
var self = uint32(os.Getuid())

// pidDir is an open /proc/<pid> folder of one of the person's processes.
// Files read through it belong to that process: once it exits they fail,
// even if its pid names another process by then.
type pidDir struct {
	pid int
	fd  int
}

// openPID opens /proc/<pid> after checking that the process is the
// person's: the folder's owner (the effective uid, or root for a process
// that may not be inspected) and the real and effective uids of its status.
func openPID(pid int) (*pidDir, error) {
	if pid <= 0 {
		return nil, gone(pid)
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, readError(pid, "/proc", err)
	}
	d := &pidDir{pid: pid, fd: fd}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		d.close()
		return nil, readError(pid, "/proc", err)
	}
	if st.Uid != self {
		d.close()
		return nil, notMine(pid)
	}
	status, err := d.read("status")
	if err != nil {
		d.close()
		return nil, err
	}
	real, effective, err := parseUIDs(status)
	if err != nil {
		d.close()
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	if real != self || effective != self {
		d.close()
		return nil, notMine(pid)
	}
	return d, nil
}

func (d *pidDir) close() { unix.Close(d.fd) }

// readError names a failed read of the process's file name; a process
// that went away is ErrGone.
func readError(pid int, name string, err error) error {
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
		return gone(pid)
	}
	return fmt.Errorf("process %d: reading %s: %w", pid, name, err)
}

// read returns the content of the process's file name ("stat", "environ").
func (d *pidDir) read(name string) ([]byte, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, readError(d.pid, name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, readError(d.pid, name, err)
	}
	return b, nil
}

// readlink returns the target of the process's link name ("cwd", "fd/3").
func (d *pidDir) readlink(name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(d.fd, name, buf)
	if err != nil {
		return "", readError(d.pid, name, err)
	}
	return string(buf[:n]), nil
}

// fds lists the process's open descriptors (the names in /proc/<pid>/fd).
func (d *pidDir) fds() ([]string, error) {
	fd, err := unix.Openat(d.fd, "fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, readError(d.pid, "fd", err)
	}
	f := os.NewFile(uintptr(fd), "fd")
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, readError(d.pid, "fd", err)
	}
	return names, nil
}

// process reads the process's stat; a zombie is ErrGone.
func (d *pidDir) process() (Process, error) {
	data, err := d.read("stat")
	if err != nil {
		return Process{}, err
	}
	s, err := parseStat(data)
	if err != nil {
		return Process{}, fmt.Errorf("process %d: %w", d.pid, err)
	}
	if s.gone() {
		return Process{}, gone(d.pid)
	}
	return Process{PID: d.pid, PPID: s.ppid, Started: s.started, TTY: s.tty, Name: s.name}, nil
}

// with runs f on the open /proc folder of the person's process pid.
func with[T any](pid int, f func(*pidDir) (T, error)) (T, error) {
	d, err := openPID(pid)
	if err != nil {
		var zero T
		return zero, err
	}
	defer d.close()
	return f(d)
}

// List returns every process of the person that has a command line
// (kernel threads have none), with its arguments. Processes that end
// while it reads are left out.
func List(ctx context.Context) ([]Process, error) {
	root, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("reading the process table: %w", err)
	}
	defer root.Close()
	names, err := root.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("reading the process table: %w", err)
	}
	var out []Process
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The folder's owner first: no file of another user's process
		// is opened.
		var st unix.Stat_t
		if unix.Fstatat(int(root.Fd()), name, &st, 0) != nil || st.Uid != self {
			continue
		}
		p, err := with(pid, func(d *pidDir) (Process, error) {
			p, err := d.process()
			if err != nil {
				return p, err
			}
			cmdline, err := d.read("cmdline")
			p.Args = splitNUL(cmdline)
			return p, err
		})
		if err == nil && len(p.Args) > 0 {
			out = append(out, p)
		}
	}
	return out, nil
}

// Get reads the person's process pid, without its arguments.
func Get(pid int) (Process, error) {
	return with(pid, (*pidDir).process)
}

// Args returns the command line of the person's process pid.
func Args(pid int) ([]string, error) {
	return with(pid, func(d *pidDir) ([]string, error) {
		b, err := d.read("cmdline")
		return splitNUL(b), err
	})
}

// Env returns the environment the person's process pid was started with.
func Env(pid int) ([]string, error) {
	return with(pid, func(d *pidDir) ([]string, error) {
		b, err := d.read("environ")
		return splitNUL(b), err
	})
}

// Cwd returns the working folder of the person's process pid.
func Cwd(_ context.Context, pid int) (string, error) {
	return with(pid, func(d *pidDir) (string, error) { return d.readlink("cwd") })
}

// HoldsOpen reports whether the person's process pid has the file at path
// open.
func HoldsOpen(_ context.Context, pid int, path string) (bool, error) {
	var want unix.Stat_t
	if err := unix.Stat(path, &want); err != nil {
		return false, fmt.Errorf("holds open %s: %w", path, err)
	}
	return with(pid, func(d *pidDir) (bool, error) {
		fds, err := d.fds()
		if err != nil {
			return false, err
		}
		for _, fd := range fds {
			var st unix.Stat_t
			if unix.Fstatat(d.fd, "fd/"+fd, &st, 0) == nil && st.Dev == want.Dev && st.Ino == want.Ino {
				return true, nil
			}
		}
		return false, nil
	})
}

// Listening returns the TCP addresses the person's process pid listens on,
// in nudge's own network namespace: its socket descriptors matched against
// the LISTEN rows of /proc/net/tcp and tcp6.
func Listening(pid int) ([]netip.AddrPort, error) {
	inodes, err := with(pid, func(d *pidDir) (map[uint64]bool, error) {
		fds, err := d.fds()
		if err != nil {
			return nil, err
		}
		inodes := map[uint64]bool{}
		for _, fd := range fds {
			if link, err := d.readlink("fd/" + fd); err == nil {
				if n, ok := socketInode(link); ok {
					inodes[n] = true
				}
			}
		}
		return inodes, nil
	})
	if err != nil || len(inodes) == 0 {
		return nil, err
	}
	var out []netip.AddrPort
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		data, err := os.ReadFile(table)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6
		}
		if err != nil {
			return nil, fmt.Errorf("listening sockets: %w", err)
		}
		for _, l := range parseListeners(data) {
			if inodes[l.inode] {
				out = append(out, l.addr)
			}
		}
	}
	return out, nil
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
	return strconv.FormatUint(st.Rdev, 10) == p.TTY, nil
}

// TTYPath is the device path of p's controlling terminal ("/dev/pts/4"):
// the one of its standard streams that is that terminal, else the pts
// device its number names (major 136-143, devices.txt); "" when it has none.
func TTYPath(p Process) string {
	if p.TTY == "" {
		return ""
	}
	path, _ := with(p.PID, func(d *pidDir) (string, error) {
		for fd := range 3 {
			link, err := d.readlink("fd/" + strconv.Itoa(fd))
			if err == nil && strings.HasPrefix(link, "/dev/") {
				if same, _ := OnTTY(p, link); same {
					return link, nil
				}
			}
		}
		return "", nil
	})
	if path != "" {
		return path
	}
	dev, err := strconv.ParseUint(p.TTY, 10, 64)
	if err != nil {
		return ""
	}
	major, minor := (dev>>8)&0xfff, (dev&0xff)|((dev>>12)&0xfff00)
	if major < 136 || major > 143 {
		return ""
	}
	return filepath.Join("/dev/pts", strconv.FormatUint((major-136)*256+minor, 10))
}
