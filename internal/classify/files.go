package classify

import (
	"fmt"
	"io/fs"
)

// Files is what a Reader may read beside its own records: the few files an
// agent keeps elsewhere that complete them (a Kimi Code session's
// state.json; kimi-cli's kimi.json and the end of its logs). The package
// opens no file itself: the daemon, `nudge classify` and the tests pass
// the real file system (internal/watch/disk); a nil Files has no files.
type Files interface {
	// ReadFile returns the content of the file at path, or an error when
	// it cannot be read or is longer than max bytes.
	ReadFile(path string, max int64) ([]byte, error)
	// Glob lists the files matching pattern (filepath.Glob's syntax).
	Glob(pattern string) ([]string, error)
	// Size is the length of the file at path.
	Size(path string) (int64, error)
	// ReadTail returns the last max bytes of the file at path (all of it
	// when shorter).
	ReadTail(path string, max int64) ([]byte, error)
}

// noFiles is a Files that has none.
type noFiles struct{}

var _ Files = noFiles{}

func (noFiles) ReadFile(path string, _ int64) ([]byte, error) { return nil, notExist(path) }
func (noFiles) Glob(string) ([]string, error)                 { return nil, nil }
func (noFiles) Size(path string) (int64, error)               { return 0, notExist(path) }
func (noFiles) ReadTail(path string, _ int64) ([]byte, error) { return nil, notExist(path) }

func notExist(path string) error { return fmt.Errorf("%s: %w", path, fs.ErrNotExist) }

// orNoFiles is files, or noFiles for nil.
func orNoFiles(files Files) Files {
	if files == nil {
		return noFiles{}
	}
	return files
}
