//go:build linux

// Package processes runs the real nudge binary beside processes of other
// local users and watches what it does with the process table: it never
// follows, asks, types for or resumes from another user's process, never
// puts a session id that is not its agent's on a command line, and reads
// the process table only when OpenCode is at work.
//
// The tests that need a second local user create a throwaway one
// (e2e/otheruser), so they run as root; elsewhere they skip, and fail under
// CI=true.
package processes

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"nudge/e2e/daemontest"
	"nudge/e2e/otheruser"
	"nudge/internal/samples"
)

// fakeOpenCode is the package of the stand-in `opencode serve`.
const fakeOpenCode = "nudge/e2e/processes/fakeopencode"

func TestMain(m *testing.M) { daemontest.Main(m, fakeOpenCode) }

// continuation is the retry message the daemons are configured with.
const continuation = "nudge-test: the last attempt failed with a provider error; continue where you left off"

// machine is one test's corner of the machine: a folder every user may
// enter, with the programs the users run.
type machine struct {
	t   *testing.T
	dir string
	bin string // nudge and opencode, executable by every user
}

func newMachine(t *testing.T) *machine {
	t.Helper()
	dir := otheruser.Shared(t)
	m := &machine{t: t, dir: dir, bin: filepath.Join(dir, "bin")}
	m.mkdir(m.bin, nil)
	copyFile(t, daemontest.Bin(daemontest.Nudge), filepath.Join(m.bin, "nudge"))
	copyFile(t, daemontest.Bin(fakeOpenCode), filepath.Join(m.bin, "opencode"))
	return m
}

// mkdir makes a folder: owned by u and private to it, or (u nil) open to
// every user.
func (m *machine) mkdir(dir string, u *account) {
	m.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		m.t.Fatal(err)
	}
	if u == nil {
		if err := os.Chmod(dir, 0o755); err != nil {
			m.t.Fatal(err)
		}
		return
	}
	m.chown(dir, u)
	if err := os.Chmod(dir, 0o700); err != nil {
		m.t.Fatal(err)
	}
}

// chown gives path and everything below it to u.
func (m *machine) chown(path string, u *account) {
	m.t.Helper()
	err := filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(u.uid), int(u.gid))
	})
	if err != nil {
		m.t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// account is a local user the test runs programs as.
type account struct {
	name     string
	uid, gid uint32
	home     string
}

// me is the user the test runs as, with a home in the machine folder.
func (m *machine) me(role string) *account {
	m.t.Helper()
	u := &account{name: "self", uid: uint32(os.Getuid()), gid: uint32(os.Getgid()), home: filepath.Join(m.dir, role)}
	m.mkdir(u.home, u)
	return u
}

// newUser creates a throwaway local user for role (otheruser.Create: as
// root only), with a home in the machine folder.
func (m *machine) newUser(role string) *account {
	m.t.Helper()
	o := otheruser.Create(m.t)
	u := &account{name: o.Name, uid: uint32(o.UID), gid: uint32(o.GID), home: filepath.Join(m.dir, role)}
	m.mkdir(u.home, u)
	return u
}

// env is u's clean environment: every per-user folder in its home.
func (u *account) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + u.home, "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(u.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(u.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(u.home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(u.home, ".cache"),
		"TMPDIR=" + u.home,
	}
}

// command is argv run as u (from its home, as it would) with env.
func (u *account) command(env []string, argv ...string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, u.home
	if u.uid != uint32(os.Getuid()) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid}}
	}
	return cmd
}

// start runs cmd with its output in the file out, and stops it (by its
// pid) when the test ends.
func (m *machine) start(what string, cmd *exec.Cmd, out string) *exec.Cmd {
	m.t.Helper()
	f, err := os.Create(out)
	if err != nil {
		m.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		m.t.Fatalf("start %s: %v", what, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); f.Close(); close(done) }()
	m.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if m.t.Failed() {
			b, _ := os.ReadFile(out)
			m.t.Logf("%s output:\n%s", what, tail(b))
		}
	})
	return cmd
}

func tail(b []byte) []byte {
	if len(b) > 20000 {
		return b[len(b)-20000:]
	}
	return b
}

// openCodeDB puts the "ok" sample database in u's OpenCode folder, with
// more sessions (id → folder) as OpenCode would have added them, and
// returns its path.
func (m *machine) openCodeDB(u *account, sessions map[string]string) string {
	m.t.Helper()
	dir := filepath.Join(u.home, ".local", "share", "opencode")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		m.t.Fatal(err)
	}
	path := filepath.Join(dir, "opencode.db")
	copyFile(m.t, samples.Dir("opencode", "ok.opencode.db"), path)
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path}).String())
	if err != nil {
		m.t.Fatal(err)
	}
	defer db.Close()
	for id, folder := range sessions {
		_, err := db.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
			SELECT ?, project_id, 'added', ?, 'added', version, 1, 1 FROM session LIMIT 1`, id, folder)
		if err != nil {
			m.t.Fatal(err)
		}
	}
	m.chown(filepath.Join(u.home, ".local"), u)
	return path
}

// openCodeSession and openCodeFolder name the session of the "ok" sample
// database.
const (
	openCodeSession = "ses_dd44a27b2ffeJB7OXPK95HKcGs"
	openCodeFolder  = "/home/dev/project"
)

// failedTurn is a recorded OpenCode stream of a turn that died of a 500
// after OpenCode's own retries, told of session in folder.
func failedTurn(t *testing.T, session, folder string) []byte {
	t.Helper()
	b, err := os.ReadFile(samples.Dir("opencode", "e500_giveup.sse_global_event.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte("ses_dd448e164ffejTL3yJs8k9i9Xz"), []byte(session))
	return bytes.ReplaceAll(b, []byte(`"/home/dev/project"`), []byte(strconv.Quote(folder)))
}

// server is a running stand-in `opencode serve --port 0`.
type server struct {
	cmd *exec.Cmd
	log string // its requests, one "METHOD PATH" a line
}

// startServer runs the stand-in as u, with env, replaying frames, and
// waits until it listens.
func (m *machine) startServer(u *account, name string, env []string, frames []byte) *server {
	m.t.Helper()
	dir := filepath.Join(m.dir, name)
	m.mkdir(dir, nil)
	framesFile := filepath.Join(dir, "frames.jsonl")
	if err := os.WriteFile(framesFile, frames, 0o644); err != nil {
		m.t.Fatal(err)
	}
	s := &server{log: filepath.Join(dir, "requests.log")}
	if err := os.WriteFile(s.log, nil, 0o666); err != nil {
		m.t.Fatal(err)
	}
	if err := os.Chmod(s.log, 0o666); err != nil {
		m.t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	s.cmd = m.start(name+" (opencode serve)", u.command(env, filepath.Join(m.bin, "opencode"),
		"-frames", framesFile, "-log", s.log, "serve", "--port", "0"), out)
	eventually(m.t, name+" to listen", 10*time.Second, func() bool {
		b, _ := os.ReadFile(out)
		return bytes.Contains(b, []byte("listening on"))
	})
	return s
}

func (s *server) requests() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// daemon is a running `nudge run --headless` of one user.
type daemon struct {
	m   *machine
	u   *account
	env []string
	log string
}

// startNudge runs nudge as u with its defaults (every agent under u's
// home) and config, and waits until it is ready.
func (m *machine) startNudge(u *account, config string, extraEnv ...string) *daemon {
	m.t.Helper()
	return m.runNudge(u, nil, config, extraEnv...)
}

// startNudgeUnder runs nudge as u under wrapper (strace …) and waits until
// it is ready.
func (m *machine) startNudgeUnder(u *account, wrapper []string) *daemon {
	m.t.Helper()
	return m.runNudge(u, wrapper, "")
}

func (m *machine) runNudge(u *account, wrapper []string, config string, extraEnv ...string) *daemon {
	m.t.Helper()
	dir := filepath.Join(u.home, "nudge")
	d := &daemon{m: m, u: u, log: filepath.Join(dir, "nudge.log")}
	cfg := fmt.Sprintf("retry: {enabled: true, message: %q, delays: [2s, 3s, 4s]}\nnotify: {desktop: false}\nlog: {file: %q, level: debug}\n%s",
		continuation, d.log, config)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o600); err != nil {
		m.t.Fatal(err)
	}
	m.chown(dir, u)
	d.env = append(append(u.env(), "NUDGE_CONFIG="+filepath.Join(dir, "config.yaml"), "NUDGE_DATA_DIR="+filepath.Join(dir, "data")), extraEnv...)
	argv := append(wrapper, filepath.Join(m.bin, "nudge"), "run", "--headless")
	m.start("nudge daemon", u.command(d.env, argv...), filepath.Join(m.dir, "nudge-"+strconv.Itoa(int(u.uid))+".out"))
	m.t.Cleanup(func() {
		if m.t.Failed() {
			b, _ := os.ReadFile(d.log)
			m.t.Logf("nudge log:\n%s", tail(b))
		}
	})
	eventually(m.t, "nudge ready", 30*time.Second, func() bool { return daemontest.Ready([]byte(d.cli("status", "--json"))) })
	if len(wrapper) > 0 {
		// A wrapper (strace) leaves its program running when it is
		// stopped: the daemon is stopped first, by its own pid.
		var st struct {
			Daemon struct{ PID int } `json:"daemon"`
		}
		if err := json.Unmarshal([]byte(d.cli("status", "--json")), &st); err != nil || st.Daemon.PID <= 0 {
			m.t.Fatalf("the daemon's pid: %v", err)
		}
		m.t.Cleanup(func() {
			syscall.Kill(st.Daemon.PID, syscall.SIGTERM)
			eventually(m.t, "the daemon to stop", 10*time.Second, func() bool { return syscall.Kill(st.Daemon.PID, 0) != nil })
		})
	}
	return d
}

// cli runs a nudge command as the daemon's user.
func (d *daemon) cli(args ...string) string {
	cmd := d.u.command(d.env, append([]string{filepath.Join(d.m.bin, "nudge")}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, io.Discard
	cmd.Run()
	return out.String()
}

func (d *daemon) logText() string {
	b, _ := os.ReadFile(d.log)
	return string(b)
}

// eventually polls cond until it holds, failing the test after within.
func eventually(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// recorder is a program in a folder of its own that only appends its
// arguments, one a line, then "--end--", to a file.
type recorder struct {
	dir, calls string
}

func (m *machine) recorder(name string) recorder {
	m.t.Helper()
	r := recorder{dir: filepath.Join(m.dir, "recorder-"+name), calls: filepath.Join(m.dir, "recorder-"+name, "calls")}
	m.mkdir(r.dir, nil)
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '" + r.calls + "'\necho --end-- >> '" + r.calls + "'\n"
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte(script), 0o755); err != nil {
		m.t.Fatal(err)
	}
	return r
}

func (r recorder) text() string {
	b, _ := os.ReadFile(r.calls)
	return string(b)
}

// path is PATH with the recorder first.
func (r recorder) path() string { return "PATH=" + r.dir + ":" + os.Getenv("PATH") }

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
