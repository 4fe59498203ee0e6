package memory

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// startCode is the files that held code when the process started: the
// program file and the libraries the loader mapped. A library loaded later
// (the C library's name service, for a user or host looked up) is left
// alone: while the loader maps it, its span is for a moment one read-only
// mapping of the file, which the loader then maps its written parts over.
// Dropping that span, read just before, would drop the written parts.
var startCode, startCodeErr = readStartCode()

func readStartCode() (map[string]bool, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, fmt.Errorf("read the mappings at start: %w", err)
	}
	defer f.Close()
	return codeFiles(f)
}

// ReleaseProgram drops the pages of the program, its file's and those of
// the libraries loaded with it, from this process's memory (its resident
// set) and returns how many bytes of mappings that covered. The pages stay
// in the page cache, where the kernel can take them back; code run next
// maps again only what it uses.
func ReleaseProgram() (int64, error) {
	if startCodeErr != nil {
		return 0, startCodeErr
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("read the mappings: %w", err)
	}
	defer f.Close()
	spans, err := codeSpans(f, startCode)
	if err != nil {
		return 0, err
	}
	// A page made the process's own between the read and the advice (a
	// debugger's breakpoint) would be dropped: nudge writes none.
	var n int64
	for _, s := range spans {
		// A raw call: the range is the program's own code, never a Go slice.
		if _, _, e := unix.Syscall(unix.SYS_MADVISE, s.start, s.end-s.start, unix.MADV_DONTNEED); e != 0 {
			return n, fmt.Errorf("drop the program's pages at %#x: %w", s.start, e)
		}
		n += int64(s.end - s.start)
	}
	return n, nil
}
