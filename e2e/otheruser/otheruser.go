// Package otheruser runs the attacker's side of a security test as a
// second local user, created for the test and removed after it. Only root
// can do that: elsewhere the test skips, and fails under CI=true.
package otheruser

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/internal/testenv"
)

// User is a throwaway local user.
type User struct {
	Name     string
	UID, GID int
}

// Create adds a system user with no home and no login shell for the
// test, and deletes it when the test ends.
func Create(t *testing.T) *User {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Missing(t, "a second local user is needed as the attacker, and only root can create one (useradd)")
	}
	useradd := testenv.Need(t, "useradd")
	userdel := testenv.Need(t, "userdel")
	raw := make([]byte, 4)
	rand.Read(raw)
	name := "nudgeatk" + hex.EncodeToString(raw)
	var out []byte
	var err error
	// useradd fails while another one holds /etc/passwd's lock.
	for try := 0; try < 20; try++ {
		out, err = exec.Command(useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "lock") {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() {
		for try := 0; try < 20; try++ {
			out, err := exec.Command(userdel, name).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "lock") {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &User{Name: name, UID: uid, GID: gid}
}

// Command runs name with args as the user, with no supplementary groups.
func (u *User) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID)}}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	return cmd
}

// Dir is a new folder the user owns (mode 0700) in a folder everyone can
// enter; it goes when the test ends.
func (u *User) Dir(t *testing.T) string {
	t.Helper()
	dir := Shared(t)
	own := filepath.Join(dir, u.Name)
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(own, u.UID, u.GID); err != nil {
		t.Fatal(err)
	}
	return own
}

// Shared is a new folder every user can enter and read, not write, that
// goes when the test ends: the place for files another user runs or reads.
func Shared(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nudge-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Copy puts a copy of the executable at path into a Shared folder, so that
// another user can run it.
func Copy(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(Shared(t), filepath.Base(path))
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}
