// Package disk reads, for an agent's readers, the files that complete its
// records (classify.Files): small files read whole and the ends of logs.
package disk

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Files is the real file system.
type Files struct{}

// Open opens the regular file at path for reading, and returns its stat.
// Anything else that an agent's folder may hold under the name — a FIFO,
// whose open would wait for a writer forever, or a link to a device that
// never ends — is refused without waiting. Reading leaves the file's
// access time alone where the system allows it (noAtime): a file read just
// after the agent wrote it would otherwise have its inode written again
// for every line (docs/performance.md §3).
func Open(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|noAtime, 0)
	if errors.Is(err, syscall.EPERM) && noAtime != 0 {
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // not the owner's
	}
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s)", path, info.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// ReadFile returns the content of the file at path, or an error when it is
// longer than max bytes.
func (Files) ReadFile(path string, max int64) ([]byte, error) {
	f, _, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: over %d bytes", path, max)
	}
	return data, nil
}

// Glob lists the files matching pattern.
func (Files) Glob(pattern string) ([]string, error) { return filepath.Glob(pattern) }

// Size is the length of the file at path.
func (Files) Size(path string) (int64, error) {
	info, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// ReadTail returns the bytes of the file at path from max bytes before its
// end on (all of it when shorter).
func (Files) ReadTail(path string, max int64) ([]byte, error) {
	f, _, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if size := info.Size(); size > max {
		if _, err := f.Seek(size-max, io.SeekStart); err != nil {
			return nil, fmt.Errorf("seek %s: %w", path, err)
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}
