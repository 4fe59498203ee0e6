// Package cli runs the real nudge binary the way a person meets it: its
// version, a second daemon, and installing it to start at login (with a
// recording stand-in for the service manager: no systemd user instance
// runs here).
package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"nudge/e2e/daemontest"
)

func TestMain(m *testing.M) { daemontest.Main(m) }

// machine is one test's home and data folder.
type machine struct {
	t         *testing.T
	home, bin string
	env       []string
	log       string // the daemon's log file
}

func newMachine(t *testing.T) *machine {
	t.Helper()
	dir := t.TempDir()
	m := &machine{t: t, home: filepath.Join(dir, "home"), bin: filepath.Join(dir, "bin"), log: filepath.Join(dir, "nudge.log")}
	for _, d := range []string{m.home, m.bin} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	m.env = []string{
		"HOME=" + m.home, "PATH=" + m.bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"NUDGE_DATA_DIR=" + filepath.Join(dir, "data"), "NUDGE_LOG_FILE=" + m.log,
		"XDG_CONFIG_HOME=" + filepath.Join(m.home, ".config"),
	}
	return m
}

// serviceManager puts a stand-in systemctl on PATH that records its calls
// and fails those whose arguments start with one of failing.
func (m *machine) serviceManager(failing ...string) string {
	m.t.Helper()
	calls := filepath.Join(m.bin, "systemctl.calls")
	os.Remove(calls)
	script := "#!/bin/sh\necho \"$*\" >> " + calls + "\ncase \"$*\" in\n"
	for _, f := range failing {
		script += "'" + f + "'*) echo 'Failed to connect to bus: No medium found' >&2; exit 1 ;;\n"
	}
	script += "esac\n"
	if err := os.WriteFile(filepath.Join(m.bin, "systemctl"), []byte(script), 0o700); err != nil {
		m.t.Fatal(err)
	}
	return calls
}

func (m *machine) nudge(args ...string) (string, error) {
	out, err := daemontest.CLI(m.env, args...)
	return string(out), err
}

func (m *machine) unit() string {
	return filepath.Join(m.home, ".config", "systemd", "user", "nudge.service")
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

func TestVersionIsTheDaemons(t *testing.T) {
	m := newMachine(t)
	out, err := m.nudge("--version")
	if err != nil {
		t.Fatal(err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(out), "nudge ")
	if !ok || v == "" {
		t.Fatalf("nudge --version = %q", out)
	}
	d := daemontest.Start(t, m.env, "run", "--headless")
	d.WaitReady(t)
	st, err := m.nudge("status", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Daemon struct{ Version string } }
	if err := json.Unmarshal([]byte(st), &s); err != nil || s.Daemon.Version != v {
		t.Errorf("status says version %q (%v), --version says %q", s.Daemon.Version, err, v)
	}
}

// The version is never just "dev" when the build knows better: a release
// build's (make's -ldflags), else the revision of the checkout it was
// built from.
func TestVersionFromTheBuild(t *testing.T) {
	dir := t.TempDir()
	build := func(flags ...string) string {
		t.Helper()
		bin := filepath.Join(dir, "nudge")
		out, err := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, daemontest.Nudge)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %v: %v\n%s", flags, err, out)
		}
		v, err := exec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(v))
	}
	if v := build("-ldflags", "-X nudge/internal/version.Release=1.2.3"); v != "nudge 1.2.3" {
		t.Errorf("a release build says %q", v)
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not built from a git checkout: %v", err)
	}
	top, _ := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Skip("a git worktree: go stamps the revision only where .git is a folder")
	}
	if v, r := build("-buildvcs=true"), strings.TrimSpace(string(rev)); !strings.Contains(v, r[:12]) || v == "nudge dev" {
		t.Errorf("built from revision %s, --version says %q", r[:12], v)
	}
}

// A daemon that cannot start says why once, on stderr, and exits 1.
func TestStartupErrorIsSaidOnce(t *testing.T) {
	m := newMachine(t)
	code, out := exitCode(t, append(m.env, "NUDGE_WEB_ADDR=192.0.2.1:0"), "run", "--headless")
	if code != 1 {
		t.Fatalf("run with a web.addr that is not loopback: exit status %d, want 1\n%s", code, out)
	}
	if n := strings.Count(out, "is not a loopback address"); n != 1 {
		t.Errorf("the reason said %d times, want once:\n%s", n, out)
	}
}

// A refused second daemon says why once and writes nothing into the log of
// the daemon that runs; started by the login service it exits 0, so the
// service manager does not start it again and again.
func TestSecondDaemonLeavesTheFirstAlone(t *testing.T) {
	m := newMachine(t)
	first := daemontest.Start(t, m.env, "run", "--headless")
	first.WaitReady(t)
	before := read(t, m.log)

	code, out := exitCode(t, m.env, "run", "--headless")
	if code != 1 {
		t.Fatalf("second daemon: exit status %d, want 1\n%s", code, out)
	}
	if n := strings.Count(out, "already running"); n != 1 {
		t.Errorf("second daemon said %q: want the reason exactly once", out)
	}
	if after := read(t, m.log); after != before {
		t.Errorf("the second daemon wrote into the first one's log:\n%s", strings.TrimPrefix(after, before))
	}
	pid := strconv.Itoa(first.Cmd.Process.Pid)
	sc := bufio.NewScanner(strings.NewReader(before))
	for sc.Scan() {
		var line struct{ PID int }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || strconv.Itoa(line.PID) != pid {
			t.Errorf("log line without the daemon's pid %s: %s", pid, sc.Text())
		}
	}

	if code, out := exitCode(t, m.env, "run", "--headless", "--service"); code != 0 || !strings.Contains(out, "already running") {
		t.Errorf("second daemon started by the service: exit status %d, want 0 saying why\n%s", code, out)
	}
	if _, err := m.nudge("status", "--json"); err != nil {
		t.Errorf("the first daemon must keep running: %v", err)
	}
}

func TestInstallCarriesTheSettingsAndIsIdempotent(t *testing.T) {
	m := newMachine(t)
	calls := m.serviceManager("--user is-active")
	config := filepath.Join(m.home, "my nudge.yaml")
	if err := os.WriteFile(config, []byte("retry:\n  enabled: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.env = append(m.env, "NUDGE_RETRY_DELAYS=2s,3s,4s")
	out, err := m.nudge("install", "--config", config)
	if err != nil || !strings.Contains(out, "running now") {
		t.Fatalf("install: %q, %v", out, err)
	}
	unit := read(t, m.unit())
	for _, want := range []string{`"run" "--service" "--config" "` + config + `"`, `Environment="NUDGE_RETRY_DELAYS=2s,3s,4s"`, `Environment="NUDGE_DATA_DIR=`} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %s:\n%s", want, unit)
		}
	}
	if got := read(t, calls); !strings.Contains(got, "--user enable nudge.service\n--user restart nudge.service\n") {
		t.Errorf("systemctl calls:\n%s", got)
	}

	// The service runs now: installing again changes nothing.
	calls = m.serviceManager()
	out, err = m.nudge("install", "--config", config)
	if err != nil || !strings.Contains(out, "already installed") {
		t.Errorf("install again: %q, %v", out, err)
	}
	if got := read(t, calls); strings.Contains(got, "restart") || strings.Contains(got, "enable") {
		t.Errorf("install again ran:\n%s", got)
	}
}

// A config file named relative to the folder `nudge install` runs in is
// the same file for the service, which starts in another folder.
func TestInstallCarriesRelativePathsAsAbsolute(t *testing.T) {
	m := newMachine(t)
	m.serviceManager("--user is-active")
	if err := os.WriteFile(filepath.Join(m.home, "nudge.yaml"), []byte("retry:\n  enabled: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	install := exec.Command(daemontest.Bin(daemontest.Nudge), "install")
	install.Dir = m.home
	install.Env = append(slices.Clone(m.env), "NUDGE_CONFIG=nudge.yaml")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if unit, want := read(t, m.unit()), `Environment="NUDGE_CONFIG=`+filepath.Join(m.home, "nudge.yaml")+`"`; !strings.Contains(unit, want) {
		t.Errorf("unit lacks %s:\n%s", want, unit)
	}
}

// With a nudge started by hand, install enables the service for the next
// login and leaves the running one alone.
func TestInstallBesideARunningDaemon(t *testing.T) {
	m := newMachine(t)
	d := daemontest.Start(t, m.env, "run", "--headless")
	d.WaitReady(t)
	calls := m.serviceManager("--user is-active")
	out, err := m.nudge("install")
	if err != nil || !strings.Contains(out, "pid "+strconv.Itoa(d.Cmd.Process.Pid)) {
		t.Fatalf("install: %q, %v; want it to name the running daemon", out, err)
	}
	if got := read(t, calls); strings.Contains(got, "restart") || !strings.Contains(got, "enable nudge.service") {
		t.Errorf("systemctl calls:\n%s\nwant enable and no start", got)
	}
}

func TestInstallWithoutServiceManagerLeavesNothing(t *testing.T) {
	m := newMachine(t)
	m.serviceManager("--user show-environment")
	out, err := m.nudge("install")
	if err == nil || !strings.Contains(err.Error(), "nothing was installed") || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("install: %q, %v; want exit 1 saying nothing was installed", out, err)
	}
	if _, err := os.Stat(m.unit()); !os.IsNotExist(err) {
		t.Errorf("unit left behind: %v", err)
	}
}

func TestUninstall(t *testing.T) {
	m := newMachine(t)
	m.serviceManager("--user is-active")
	if _, err := m.nudge("install"); err != nil {
		t.Fatal(err)
	}
	// The service manager went away (no user instance any more).
	m.serviceManager("--user show-environment")
	out, err := m.nudge("uninstall")
	if err != nil || !strings.Contains(out, "removed") || !strings.Contains(out, "nothing was stopped") {
		t.Errorf("uninstall: %q, %v", out, err)
	}
	if _, err := os.Stat(m.unit()); !os.IsNotExist(err) {
		t.Errorf("unit still there: %v", err)
	}
	out, err = m.nudge("uninstall")
	if err != nil || !strings.Contains(out, "not installed") {
		t.Errorf("uninstall again: %q, %v; want exit 0, not installed", out, err)
	}
}

// A value `nudge run` refuses is refused by `nudge config check` too,
// with its key: checking the settings before a start says what the start
// would say.
func TestConfigCheckRefusesWhatRunRefuses(t *testing.T) {
	m := newMachine(t)
	for key, env := range map[string]string{
		"log.level":    "NUDGE_LOG_LEVEL=verbose",
		"inject.order": "NUDGE_INJECT_ORDER=tmux,bogus",
		"web.addr":     "NUDGE_WEB_ADDR=0.0.0.0:0",
		"watch.events": "NUDGE_WATCH_EVENTS=bogus",
	} {
		bad := append(slices.Clone(m.env), env)
		if _, err := daemontest.CLI(bad, "run", "--headless"); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("run with %s: %v; want a refusal naming %s", env, err, key)
		}
		_, err := daemontest.CLI(bad, "config", "check")
		if err == nil || !strings.Contains(err.Error(), "exit status 1") || !strings.Contains(err.Error(), key) {
			t.Errorf("config check with %s: %v; want exit 1 naming %s", env, err, key)
		}
	}
}

// A typo in the config file is named with the setting meant: a warning in
// the daemon's log at start, an error from `nudge config check`; `nudge
// config` shows where each value in effect came from.
func TestConfigTyposAndOrigins(t *testing.T) {
	m := newMachine(t)
	file := filepath.Join(m.home, "nudge.yaml")
	if err := os.WriteFile(file, []byte("retry:\n  dealys: [1s]\n  message: from the file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.env = append(m.env, "NUDGE_CONFIG="+file, "NUDGE_WEB_ADDR=127.0.0.1:0")
	_, err := m.nudge("config", "check")
	if err == nil || !strings.Contains(err.Error(), "exit status 1") || !strings.Contains(err.Error(), `"retry.dealys" is not a setting (did you mean retry.delays?)`) {
		t.Errorf("config check: %v; want exit 1 naming the typo and the setting meant", err)
	}
	// Several problems: one line each.
	code, said := exitCode(t, append(m.env, "NUDGE_RETRY_DELAYZ=1s"), "config", "check")
	lines := map[string]bool{}
	for l := range strings.Lines(said) {
		lines[strings.TrimSpace(l)] = true
	}
	for _, want := range []string{
		file + `: "retry.dealys" is not a setting (did you mean retry.delays?)`,
		"environment: NUDGE_RETRY_DELAYZ is not a setting (did you mean NUDGE_RETRY_DELAYS?)",
	} {
		if code != 1 || !lines[want] {
			t.Errorf("config check with two problems: exit status %d\n%s\nwant exit 1 and a line %q", code, said, want)
		}
	}
	out, err := m.nudge("config", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var view struct {
		File     string
		Settings []struct{ Key, Origin, Via string }
		Problems []string
	}
	if err := json.Unmarshal([]byte(out), &view); err != nil {
		t.Fatal(err)
	}
	origin := map[string]string{}
	for _, s := range view.Settings {
		origin[s.Key] = s.Origin + " " + s.Via
	}
	if view.File != file || origin["retry.message"] != "file "+file || origin["web.addr"] != "env NUDGE_WEB_ADDR" || origin["retry.delays"] != "default " || len(view.Problems) != 1 {
		t.Errorf("config --json: file %q, origins %v, problems %q", view.File, origin, view.Problems)
	}

	d := daemontest.Start(t, m.env, "run", "--headless")
	d.WaitReady(t)
	if log := read(t, m.log); !strings.Contains(log, "retry.dealys") || !strings.Contains(log, `"level":"WARN"`) {
		t.Errorf("daemon log does not warn about the typo:\n%s", log)
	}
	out, err = m.nudge("config")
	if err != nil || !strings.Contains(out, "retry after API errors: on") {
		t.Errorf("config with a daemon running: %v\n%s\nwant its toggles", err, out)
	}
	if out, err := m.nudge("config", "check", "--config", filepath.Join(m.home, "missing.yaml")); err == nil {
		t.Errorf("config check of a missing file: %q, want an error", out)
	}
}
