//go:build unix

package watch

import (
	"os"
	"syscall"
)

// fileKey is the device and inode of the file fi describes.
func fileKey(fi os.FileInfo) (dev, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Dev), uint64(st.Ino) // Dev is int32 on darwin
}
