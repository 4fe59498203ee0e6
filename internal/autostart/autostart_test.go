package autostart

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"nudge/internal/testenv"
)

// standIn puts a recording program called name first on PATH; it appends
// its arguments to the returned log, one call per line, and exits 1 for
// the calls whose arguments start with one of failing.
func standIn(t *testing.T, name string, failing ...string) string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	script := "#!/bin/sh\necho \"" + name + " $*\" >> " + log + "\ncase \"$*\" in\n"
	for _, f := range failing {
		script += "'" + f + "'*) echo \"" + name + ": refused\" >&2; exit 1 ;;\n"
	}
	script += "esac\nexit 0\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func calls(t *testing.T, log string) string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

func linuxPlan(t *testing.T, s Settings) (Plan, string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", "")
	if s.Exe == "" {
		s.Exe = "/opt/my tools/nudge"
	}
	p, err := For("linux", s, home, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return p, home
}

func TestLinuxUnitInstallsAndUninstalls(t *testing.T) {
	log := standIn(t, "systemctl", "--user is-active")
	p, home := linuxPlan(t, Settings{Config: "/home/dev/nudge $HOME.yaml", Env: []string{"NUDGE_RETRY_DELAYS=2s,3s", `NUDGE_X=a"b%c$5`}})
	unit := filepath.Join(home, ".config", "systemd", "user", "nudge.service")
	if p.File != unit {
		t.Fatalf("unit file %s, want %s", p.File, unit)
	}
	if got, err := p.Install(false); err != nil || got != Installed {
		t.Fatalf("install: %v, %v", got, err)
	}
	data, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`ExecStart="/opt/my tools/nudge" "run" "--service" "--config" "/home/dev/nudge $$HOME.yaml"`,
		`Environment="NUDGE_RETRY_DELAYS=2s,3s"`,
		// systemd.exec(5): in Environment= "$" has no special meaning.
		`Environment="NUDGE_X=a\"b%%c$5"`,
		"Restart=on-failure",
		"WantedBy=default.target",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("unit lacks %s:\n%s", want, data)
		}
	}
	if info, _ := os.Stat(unit); info.Mode().Perm() != 0o600 {
		t.Errorf("unit mode %v, want 0600", info.Mode().Perm())
	}
	want := "systemctl --user show-environment\nsystemctl --user is-active --quiet nudge.service\n" +
		"systemctl --user daemon-reload\nsystemctl --user enable nudge.service\nsystemctl --user restart nudge.service\n"
	if got := calls(t, log); got != want {
		t.Errorf("install calls:\n%s\nwant:\n%s", got, want)
	}

	// systemctl enable made the login link; a manager that is gone by
	// uninstall time cannot remove it, so uninstall does.
	link := p.Links[0]
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(unit, link); err != nil {
		t.Fatal(err)
	}
	os.Remove(log)
	standIn(t, "systemctl", "--user show-environment")
	if got, err := p.Uninstall(); err != nil || got != RemovedNoReach {
		t.Fatalf("uninstall: %v, %v; want removed without the manager", got, err)
	}
	for _, f := range []string{unit, link} {
		if _, err := os.Lstat(f); !os.IsNotExist(err) {
			t.Errorf("%s still there after uninstall: %v", f, err)
		}
	}
	if got, err := p.Uninstall(); err != nil || got != NotInstalled {
		t.Errorf("uninstalling twice: %v, %v; want not installed", got, err)
	}
}

func TestUninstallStopsAndDisables(t *testing.T) {
	log := standIn(t, "systemctl")
	p, _ := linuxPlan(t, Settings{})
	if err := writeFile(p.File, p.Content); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Uninstall(); err != nil || got != Removed {
		t.Fatalf("uninstall: %v, %v", got, err)
	}
	want := "systemctl --user show-environment\nsystemctl --user disable --now nudge.service\n"
	if got := calls(t, log); got != want {
		t.Errorf("calls:\n%s\nwant:\n%s", got, want)
	}
}

// Without a systemd user instance nothing is written and the error says
// what to do instead.
func TestNoServiceManagerInstallsNothing(t *testing.T) {
	standIn(t, "systemctl", "--user show-environment")
	p, _ := linuxPlan(t, Settings{})
	_, err := p.Install(false)
	if err == nil || !strings.Contains(err.Error(), "nothing was installed") || !strings.Contains(err.Error(), "autostart") {
		t.Fatalf("install: %v; want a refusal that says what to do", err)
	}
	if _, err := os.Stat(p.File); !os.IsNotExist(err) {
		t.Errorf("a unit was left behind: %v", err)
	}
}

// A failed enable puts back the unit that was there before.
func TestEnableFailurePutsTheOldUnitBack(t *testing.T) {
	standIn(t, "systemctl", "--user is-active", "--user enable")
	p, _ := linuxPlan(t, Settings{Config: "/new.yaml"})
	old := []byte("[Service]\nExecStart=/old/nudge run\n")
	if err := writeFile(p.File, old); err != nil {
		t.Fatal(err)
	}
	_, err := p.Install(false)
	if err == nil || !strings.Contains(err.Error(), "systemctl --user enable nudge.service") || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("install: %v; want the failing command and its output", err)
	}
	if got, _ := os.ReadFile(p.File); string(got) != string(old) {
		t.Errorf("unit after a failed install:\n%s\nwant the old one back", got)
	}

	p, _ = linuxPlan(t, Settings{})
	if _, err := p.Install(false); err == nil {
		t.Fatal("install succeeded with enable failing")
	}
	if _, err := os.Stat(p.File); !os.IsNotExist(err) {
		t.Errorf("a failed first install left its unit: %v", err)
	}
}

// Installing again changes nothing while the service runs as installed.
func TestInstallAgainIsANoOp(t *testing.T) {
	log := standIn(t, "systemctl")
	p, _ := linuxPlan(t, Settings{})
	if err := writeFile(p.File, p.Content); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Install(true); err != nil || got != Unchanged {
		t.Fatalf("install again: %v, %v; want unchanged", got, err)
	}
	want := "systemctl --user show-environment\nsystemctl --user is-active --quiet nudge.service\n"
	if got := calls(t, log); got != want {
		t.Errorf("calls:\n%s\nwant only the checks:\n%s", got, want)
	}
}

// A nudge started by hand keeps running: the service is enabled for the
// next login, not started beside it.
func TestInstallBesideARunningDaemonDoesNotStartIt(t *testing.T) {
	log := standIn(t, "systemctl", "--user is-active")
	p, _ := linuxPlan(t, Settings{})
	if got, err := p.Install(true); err != nil || got != StartsAtLogin {
		t.Fatalf("install: %v, %v; want starts at login", got, err)
	}
	if got := calls(t, log); strings.Contains(got, "restart") || !strings.Contains(got, "enable nudge.service") {
		t.Errorf("calls:\n%s\nwant enable and no start", got)
	}
}

func TestLaunchAgentPlist(t *testing.T) {
	python := testenv.Need(t, "python3")
	exe := `/Applications/Nudge & Co/nudge.app/Contents/MacOS/<nudge>`
	p, err := For("darwin", Settings{Exe: exe, Config: "/Users/dev/n.yaml", Env: []string{"NUDGE_DATA_DIR=/Users/dev/d&d"}}, "/Users/dev", 501)
	if err != nil {
		t.Fatal(err)
	}
	if p.File != "/Users/dev/Library/LaunchAgents/dev.nudge.nudge.plist" {
		t.Errorf("file %s", p.File)
	}
	// Parsed by Python's plistlib, the reader closest to macOS's own.
	cmd := exec.Command(python, "-c", "import plistlib,sys,json; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))")
	cmd.Stdin = strings.NewReader(string(p.Content))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("plistlib: %v\n%s", err, p.Content)
	}
	var doc struct {
		Label             string
		AssociatedBundle  string `json:"AssociatedBundleIdentifiers"`
		ProgramArguments  []string
		Env               map[string]string `json:"EnvironmentVariables"`
		StandardOutPath   string
		StandardErrorPath string
		RunAtLoad         bool
		KeepAlive         map[string]bool
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{exe, "run", "--service", "--config", "/Users/dev/n.yaml"}
	if strings.Join(doc.ProgramArguments, "|") != strings.Join(want, "|") {
		t.Errorf("ProgramArguments %q, want %q", doc.ProgramArguments, want)
	}
	if doc.Label != BundleID || doc.AssociatedBundle != BundleID {
		t.Errorf("label %q, associated %q; want %s", doc.Label, doc.AssociatedBundle, BundleID)
	}
	if doc.Env["NUDGE_DATA_DIR"] != "/Users/dev/d&d" {
		t.Errorf("environment %v", doc.Env)
	}
	if doc.StandardErrorPath != "/Users/dev/Library/Logs/nudge/launchd.log" || doc.StandardOutPath != doc.StandardErrorPath {
		t.Errorf("log paths %q %q", doc.StandardOutPath, doc.StandardErrorPath)
	}
	if !doc.RunAtLoad || doc.KeepAlive["SuccessfulExit"] {
		t.Errorf("RunAtLoad %v KeepAlive %v: want started at login, restarted only after a failure", doc.RunAtLoad, doc.KeepAlive)
	}
	if got := strings.Join(p.Start[len(p.Start)-1], " "); got != "launchctl bootstrap gui/501 "+p.File {
		t.Errorf("start %q", got)
	}
}

// A LaunchAgent that is not loaded yet is fine to boot out before the
// bootstrap; only the bootstrap's failure counts.
func TestLaunchAgentInstallToleratesNothingLoaded(t *testing.T) {
	log := standIn(t, "launchctl", "print gui/501/", "bootout")
	p, err := For("darwin", Settings{Exe: "/usr/local/bin/nudge"}, t.TempDir(), 501)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Install(false); err != nil || got != Installed {
		t.Fatalf("install: %v, %v\n%s", got, err, calls(t, log))
	}
	if got := calls(t, log); !strings.HasSuffix(got, "launchctl bootstrap gui/501 "+p.File+"\n") {
		t.Errorf("calls:\n%s", got)
	}
}

func TestBadSettingsAreRefused(t *testing.T) {
	for _, s := range []Settings{
		{Exe: "nudge"},
		{Exe: "/bin/nudge", Config: "rel.yaml"},
		{Exe: "/bin/nudge", Env: []string{"HOME=/x"}},
	} {
		if _, err := For("linux", s, "/home/dev", 1000); err == nil {
			t.Errorf("%+v: accepted", s)
		}
	}
	if _, err := For("plan9", Settings{Exe: "/bin/nudge"}, "/home/dev", 1000); err == nil {
		t.Error("an unsupported system must be an error")
	}
}

func TestNudgeEnvKeepsOnlyNudgeVariables(t *testing.T) {
	got, err := nudgeEnv([]string{"PATH=/bin", "NUDGE_B=2", "NUDGE_A=1", "NUDGEX=3", "NUDGE_BROKEN"})
	if err != nil || strings.Join(got, " ") != "NUDGE_A=1 NUDGE_B=2" {
		t.Errorf("nudgeEnv = %q, %v", got, err)
	}
}

// A file or folder named relative to where `nudge install` runs is
// carried as the same file: the service starts in another folder.
func TestNudgeEnvMakesPathsAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	got, err := nudgeEnv([]string{"NUDGE_CONFIG=my.yaml", "NUDGE_DATA_DIR=data", "NUDGE_LOG_FILE=logs/n.log",
		"NUDGE_AGENTS_CLAUDE_ROOT=c", "NUDGE_RETRY_MESSAGE=go on", "NUDGE_WEB_ADDR=127.0.0.1:0", "NUDGE_AGENTS_CODEX_ROOT=/abs"})
	want := []string{"NUDGE_AGENTS_CLAUDE_ROOT=" + filepath.Join(dir, "c"), "NUDGE_AGENTS_CODEX_ROOT=/abs",
		"NUDGE_CONFIG=" + filepath.Join(dir, "my.yaml"), "NUDGE_DATA_DIR=" + filepath.Join(dir, "data"),
		"NUDGE_LOG_FILE=" + filepath.Join(dir, "logs/n.log"), "NUDGE_RETRY_MESSAGE=go on", "NUDGE_WEB_ADDR=127.0.0.1:0"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("nudgeEnv = %q, %v\nwant %q", got, err, want)
	}
}

// A setting a service file cannot carry as it is (a control character,
// text that is not UTF-8) is refused with the setting named, never written
// into a plist that launchd would not read.
func TestSettingsAServiceFileCannotCarryAreRefused(t *testing.T) {
	for _, goos := range []string{"darwin", "linux"} {
		for _, s := range []Settings{
			{Exe: "/opt/nudge", Env: []string{"NUDGE_RETRY_MESSAGE=go on\x1b[2J"}},
			{Exe: "/opt/nudge", Env: []string{"NUDGE_RETRY_MESSAGE=one\nline"}},
			{Exe: "/opt/nudge", Config: "/home/dev/n\xff.yaml"},
		} {
			if _, err := For(goos, s, "/home/dev", 1000); err == nil || !strings.Contains(err.Error(), "cannot carry") {
				t.Errorf("%s %+v: %v, want a refusal", goos, s, err)
			}
		}
		if _, err := For(goos, Settings{Exe: "/opt/nudge", Env: []string{"NUDGE_RETRY_MESSAGE=go\ton ✓"}}, "/home/dev", 1000); err != nil {
			t.Errorf("%s: a tab and non-ASCII text refused: %v", goos, err)
		}
	}
}
