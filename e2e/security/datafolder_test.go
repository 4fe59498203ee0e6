package security

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"nudge/e2e/daemontest"
	"nudge/e2e/otheruser"
	"nudge/e2e/snoop"
)

// precious is a file of the person's that a link in a data folder points at.
func precious(t *testing.T) (path string, unchanged func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "thesis.txt")
	must(t, os.WriteFile(path, []byte("two years of work\n"), 0o600))
	before, err := os.Stat(path)
	must(t, err)
	return path, func() {
		t.Helper()
		b, err := os.ReadFile(path)
		after, _ := os.Stat(path)
		if err != nil || string(b) != "two years of work\n" || !after.ModTime().Equal(before.ModTime()) {
			t.Fatalf("the person's file was touched: %q, %v", b, err)
		}
	}
}

// refused runs `nudge run --headless` and expects it to stop at once,
// saying each of says.
func (w *world) refused(says ...string) {
	w.t.Helper()
	d := daemontest.Start(w.t, w.env, "run", "--headless")
	if code := d.Exit(w.t); code != 1 {
		w.t.Fatalf("nudge run: exit status %d, want 1:\n%s", code, d.Log)
	}
	for _, s := range says {
		if !strings.Contains(d.Log.String(), s) {
			w.t.Errorf("nudge run does not say %q:\n%s", s, d.Log)
		}
	}
}

// TestAnotherUsersDataFolderIsRefused: NUDGE_DATA_DIR names a folder
// another user created, open to everyone (0777), holding nudge.lock, a
// link to a file of the person's, and a socket of its own where nudge's
// control socket goes. nudge refuses to run there and says why; the
// person's file is untouched; the CLI sends the planted socket nothing.
func TestAnotherUsersDataFolderIsRefused(t *testing.T) {
	attacker := otheruser.Create(t)
	file, unchanged := precious(t)
	data := filepath.Join(attacker.Dir(t), "nudge")
	plant := attacker.Command("/bin/sh", "-c", `mkdir -m 0777 "$1" && chmod 0777 "$1" && ln -s "$2" "$1/nudge.lock" && : > "$1/nudge.db"`, "sh", data, file)
	if out, err := plant.CombinedOutput(); err != nil {
		t.Fatalf("the other user prepares the folder: %v\n%s", err, out)
	}
	fake := snoop.Start(t, daemontest.Bin(snoop.Cmd), "unix:"+filepath.Join(data, "nudge.sock"), attacker)
	w := newWorld(t)
	w.data = data
	w.env = append(w.env, "NUDGE_DATA_DIR="+data)

	w.refused("data folder "+data, "belongs to user "+attacker.Name)
	unchanged()

	for _, args := range [][]string{{"status"}, {"inbox"}, {"inbox", "read-all"}, {"inbox", "--url"}, {"pause"}} {
		_, err := w.nudge(args...)
		if err == nil || !strings.Contains(err.Error(), "served by another user") && !strings.Contains(err.Error(), "belongs to user "+attacker.Name) {
			t.Errorf("nudge %v in the other user's folder: %v; want a refusal naming the other user", args, err)
		}
	}
	for _, r := range fake.Requests(t) {
		if r.Method != "CONNECT" {
			t.Errorf("the planted socket got a request: %+v", r)
		}
	}
	// `nudge wrap` still runs the agent, and says why nudge cannot type into it.
	cmd := exec.Command(daemontest.Bin(daemontest.Nudge), "wrap", "--", "true")
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "belongs to user "+attacker.Name) {
		t.Errorf("nudge wrap: %v\n%s", err, out)
	}
	unchanged()
}

// TestOpenDataFolderIsRefused: a data folder of the person's own that
// everyone can write to is refused with what to do about it.
func TestOpenDataFolderIsRefused(t *testing.T) {
	w := newWorld(t)
	must(t, os.Mkdir(w.data, 0o700))
	must(t, os.Chmod(w.data, 0o777))
	w.refused("data folder "+w.data, "chmod 700")
	must(t, os.Chmod(w.data, 0o700))
	w.start()
}

// TestLockLinkIsNeverFollowed: even in the person's own folder, nudge
// writes its lock, secret and address through no link.
func TestLockLinkIsNeverFollowed(t *testing.T) {
	file, unchanged := precious(t)
	w := newWorld(t)
	must(t, os.Mkdir(w.data, 0o700))
	must(t, os.Symlink(file, filepath.Join(w.data, "nudge.lock")))
	w.refused(filepath.Join(w.data, "nudge.lock"), "symbolic link")
	unchanged()
	must(t, os.Remove(filepath.Join(w.data, "nudge.lock")))
	for _, name := range []string{"web.secret", "web.url"} {
		must(t, os.Symlink(file, filepath.Join(w.data, name)))
	}
	d := w.start()
	unchanged()
	for _, name := range []string{"web.secret", "web.url"} {
		fi, err := os.Lstat(filepath.Join(w.data, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want a user-only file in place of the link", name, fi.Mode(), err)
		}
	}
	_, err := w.nudge("quit")
	must(t, err)
	d.Exit(t)
}
