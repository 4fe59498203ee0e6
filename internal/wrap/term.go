package wrap

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), getTermios)
	return err == nil
}

// makeRaw puts the terminal f in raw mode, as cfmakeraw(3) does: every key
// reaches the child as a byte (Ctrl-C included) and output is not
// post-processed. The returned function restores the previous mode.
func makeRaw(f *os.File) (func() error, error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, getTermios)
	if err != nil {
		return nil, fmt.Errorf("terminal mode: %w", err)
	}
	raw := *old
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN] = 1
	raw.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, setTermios, &raw); err != nil {
		return nil, fmt.Errorf("raw terminal mode: %w", err)
	}
	return func() error {
		if err := unix.IoctlSetTermios(fd, setTermios, old); err != nil {
			return fmt.Errorf("restore terminal mode: %w", err)
		}
		return nil
	}, nil
}

// foreground returns the foreground process group of the terminal whose
// master side is ptmx: the group a Ctrl-C typed there would interrupt.
func foreground(ptmx *os.File) (int, error) {
	return unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPGRP)
}
