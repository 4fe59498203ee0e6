package disk

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Reading a file the agent has just written leaves its access time alone:
// under relatime every first read after a write would update it.
func TestOpenLeavesAccessTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	written := time.Now().Add(-time.Minute).Truncate(time.Second) // whole seconds: any file system keeps them
	past := written.Add(-time.Hour)                               // older than the write: relatime updates it on a read
	atime := func() time.Time {
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		return time.Unix(st.Atim.Unix())
	}
	read := func(open func() (*os.File, error)) time.Time {
		if err := os.Chtimes(path, past, written); err != nil {
			t.Fatal(err)
		}
		f, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Read(make([]byte, 8)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return atime()
	}
	if read(func() (*os.File, error) { return os.Open(path) }).Equal(past) {
		t.Skip("this file system does not update access times (noatime)")
	}
	if got := read(func() (*os.File, error) { f, _, err := Open(path); return f, err }); !got.Equal(past) {
		t.Errorf("access time after Open and a read = %v, want it left at %v", got, past)
	}
}
