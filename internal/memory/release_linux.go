package memory

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ReleaseProgram drops the pages of the program, its file's and the C
// library's it loaded, from this process's memory (its resident set) and
// returns how many bytes of mappings that covered. The pages stay in the
// page cache, where the kernel can take them back; code run next maps
// again only what it uses.
func ReleaseProgram() (int64, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("read the mappings: %w", err)
	}
	defer f.Close()
	spans, err := codeSpans(f)
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
