package disk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"nudge/internal/testenv"
)

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kimi.log")
	content := strings.Repeat("a", 100) + "\n" + strings.Repeat("b", 20) + "\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	var f Files
	if data, err := f.ReadFile(path, int64(len(content))); err != nil || string(data) != content {
		t.Errorf("ReadFile = %d bytes, %v", len(data), err)
	}
	if _, err := f.ReadFile(path, int64(len(content))-1); err == nil {
		t.Error("a file over the limit was read")
	}
	if n, err := f.Size(path); err != nil || n != int64(len(content)) {
		t.Errorf("Size = %d, %v", n, err)
	}
	if tail, err := f.ReadTail(path, 22); err != nil || string(tail) != "\n"+strings.Repeat("b", 20)+"\n" {
		t.Errorf("ReadTail = %q, %v", tail, err)
	}
	if all, err := f.ReadTail(path, 1<<20); err != nil || string(all) != content {
		t.Errorf("ReadTail of a short file = %d bytes, %v", len(all), err)
	}
	if got, err := f.Glob(filepath.Join(dir, "kimi*.log")); err != nil || len(got) != 1 || got[0] != path {
		t.Errorf("Glob = %v, %v", got, err)
	}
	missing := filepath.Join(dir, "none")
	for what, err := range map[string]error{
		"ReadFile": func() error { _, err := f.ReadFile(missing, 10); return err }(),
		"Size":     func() error { _, err := f.Size(missing); return err }(),
		"ReadTail": func() error { _, err := f.ReadTail(missing, 10); return err }(),
	} {
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s of a missing file: %v", what, err)
		}
	}
}

// A FIFO or a link to a device under a file's name is refused at once:
// reading it would wait for a writer, or never end.
func TestOnlyRegularFilesAreRead(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "kimi.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	device := filepath.Join(dir, "kimi.1.log")
	if err := os.Symlink("/dev/zero", device); err != nil {
		t.Fatal(err)
	}
	var f Files
	for _, path := range []string{fifo, device} {
		for what, read := range map[string]func() error{
			"ReadFile": func() error { _, err := f.ReadFile(path, 1<<20); return err },
			"ReadTail": func() error { _, err := f.ReadTail(path, 1<<20); return err },
		} {
			if err := testenv.Returns(t, what+"("+path+")", read); err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s(%s) = %v, want a refusal", what, path, err)
			}
		}
	}
}
