package disk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
