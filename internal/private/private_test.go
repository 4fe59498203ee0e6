package private

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"nudge/internal/testenv"
)

// stranger is a user id that is neither this user nor root.
const stranger = 65534

// asRoot skips (fails under CI) unless the test can give files away.
func asRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Missing(t, "giving a file to another user needs root")
	}
}

func mustErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want an error naming %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not say %q", err, p)
		}
	}
}

func TestFolderIsCreatedUserOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "data")
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	if err := Folder("data folder", dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("created %v, %v; want 0700 even under umask 000", fi.Mode(), err)
	}
}

func TestOpenFolderIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o777, 0o770, 0o702} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		mustErr(t, Folder("data folder", dir), "data folder "+dir, "chmod 700")
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Check("data folder", dir); err != nil {
		t.Fatalf("a folder others can only read: %v", err)
	}
}

// A folder every user shares, as /tmp (log.file: /tmp/nudge.log), is
// refused with advice to choose another: never to chmod it, nor remove it.
func TestSharedFolderIsRefusedWithTheRightAdvice(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	err := Check("log folder", shared)
	mustErr(t, err, "log folder "+shared, "every user shares", "choose a folder of your own")
	if strings.Contains(err.Error(), "chmod") || strings.Contains(err.Error(), "remove") {
		t.Fatalf("error %q tells to change or remove a folder every user shares", err)
	}
}

func TestFolderInsideAnOpenFolderIsRefused(t *testing.T) {
	open := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(open, "data")
	mustErr(t, Folder("data folder", dir), dir, "lies in "+open, "every user can change")
	// Sticky, as /tmp: others cannot remove or rename what is not theirs.
	if err := os.Chmod(open, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := Check("data folder", dir); err != nil {
		t.Fatalf("inside a sticky folder: %v", err)
	}
}

func TestAnotherUsersFolderIsRefused(t *testing.T) {
	asRoot(t)
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, stranger, stranger); err != nil {
		t.Fatal(err)
	}
	mustErr(t, Check("data folder", dir), "data folder "+dir, "not to you")
	// Inside it, a folder of this user is still at that user's mercy.
	inner := filepath.Join(dir, "mine")
	if err := os.Mkdir(inner, 0o700); err != nil {
		t.Fatal(err)
	}
	mustErr(t, Check("data folder", inner), "lies in "+dir)
	// A link of another user on the way could be pointed elsewhere.
	own := filepath.Join(t.TempDir(), "own")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	sticky := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(sticky, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sticky, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(sticky, "data")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, stranger, stranger); err != nil {
		t.Fatal(err)
	}
	mustErr(t, Check("data folder", link), "goes through the link "+link)
}

func TestForeignEntryIsRefused(t *testing.T) {
	asRoot(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "nudge.lock")
	if err := os.Symlink("/etc/hostname", lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(lock, stranger, stranger); err != nil {
		t.Fatal(err)
	}
	mustErr(t, Check("data folder", dir), lock, "not to you", "remove it")
}

func TestWritableEntryIsRefused(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "nudge.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(db, 0o666); err != nil {
		t.Fatal(err)
	}
	mustErr(t, Check("data folder", dir), db, "chmod go-w")
}

func TestOpenFileNeverFollowsALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim.txt")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "nudge.lock")
	if err := os.Symlink(victim, lock); err != nil {
		t.Fatal(err)
	}
	_, err := OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o600)
	mustErr(t, err, lock, "symbolic link")
	if err := WriteFile(lock, []byte("42\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the link's target changed: %q", b)
	}
	fi, err := os.Lstat(lock)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("WriteFile left %v, %v; want a new user-only file in place of the link", fi.Mode(), err)
	}
}

func TestOpenFileMakesItUserOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web.secret")
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode())
	}
	if _, err := OpenFile(filepath.Dir(path), os.O_RDONLY, 0); err == nil {
		t.Fatal("a folder was opened as a file")
	}
}

func TestOpenFileRefusesAnotherUsersFile(t *testing.T) {
	asRoot(t)
	path := filepath.Join(t.TempDir(), "web.url")
	if err := os.WriteFile(path, []byte("http://127.0.0.1:1/"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, stranger, stranger); err != nil {
		t.Fatal(err)
	}
	_, err := OpenFile(path, os.O_RDONLY, 0)
	mustErr(t, err, path, "not to you")
	if errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// A file of settings is read when only this user can change it; one open
// to others, in an open folder, or a FIFO is refused without waiting, and
// a missing one is fs.ErrNotExist.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile("config file", path, 64); err != nil || string(b) != "a: 1\n" {
		t.Fatalf("own file: %q, %v", b, err)
	}
	if _, err := ReadFile("config file", path, 2); err == nil {
		t.Error("a file over the limit was read")
	}
	if err := os.Chmod(path, 0o620); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile("config file", path, 64)
	mustErr(t, err, "config file "+path, "mode 0620", "chmod go-w")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile("config file", path, 64)
	mustErr(t, err, "lies in "+dir, "every user can change")
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	err = testenv.Returns(t, "reading a FIFO", func() error {
		_, err := ReadFile("config file", fifo, 64)
		return err
	})
	mustErr(t, err, "not a regular file")
	if _, err := ReadFile("config file", filepath.Join(dir, "none"), 64); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadFileRefusesAnotherUsersFile(t *testing.T) {
	asRoot(t)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, stranger, stranger); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile("config file", path, 64)
	mustErr(t, err, "belongs to user", "(65534)")
}
