package autostart

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// standIn puts a recording program called name first on PATH; it appends
// its arguments to the returned log, one call per line.
func standIn(t *testing.T, name string, exit int) string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	script := "#!/bin/sh\necho \"" + name + " $*\" >> " + log + "\nexit " + strconv.Itoa(exit) + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func TestLinuxUnitInstallsAndUninstalls(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", "")
	calls := standIn(t, "systemctl", 0)
	exe := "/opt/my tools/nudge"
	p, err := For("linux", exe, home, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Install(); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(home, ".config", "systemd", "user", "nudge.service")
	data, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `ExecStart="/opt/my tools/nudge" run`) || !strings.Contains(string(data), "WantedBy=default.target") {
		t.Errorf("unit:\n%s", data)
	}
	if info, _ := os.Stat(unit); info.Mode().Perm() != 0o600 {
		t.Errorf("unit mode %v, want 0600", info.Mode().Perm())
	}
	if err := p.Uninstall(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Errorf("unit still there after uninstall: %v", err)
	}
	got, _ := os.ReadFile(calls)
	want := "systemctl --user daemon-reload\nsystemctl --user enable --now nudge.service\nsystemctl --user disable --now nudge.service\n"
	if string(got) != want {
		t.Errorf("calls:\n%s\nwant:\n%s", got, want)
	}
	if err := p.Uninstall(); err != nil {
		t.Errorf("uninstalling twice: %v", err)
	}
}

func TestEnableFailureSaysWhatWasWritten(t *testing.T) {
	home := t.TempDir()
	standIn(t, "systemctl", 1)
	p, err := For("linux", "/usr/bin/nudge", home, 1000)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Install()
	if err == nil || !strings.Contains(err.Error(), p.File) || !strings.Contains(err.Error(), "systemctl --user daemon-reload") {
		t.Fatalf("error %v: want the file written and the failing command", err)
	}
}

func TestLaunchAgentIsValidPlist(t *testing.T) {
	p, err := For("darwin", `/Applications/Nudge & Co/<nudge>`, "/Users/dev", 501)
	if err != nil {
		t.Fatal(err)
	}
	if p.File != "/Users/dev/Library/LaunchAgents/dev.nudge.nudge.plist" {
		t.Errorf("file %s", p.File)
	}
	var doc struct {
		Dict struct {
			Strings []string `xml:"array>string"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(p.Content, &doc); err != nil {
		t.Fatalf("plist is not XML: %v\n%s", err, p.Content)
	}
	if len(doc.Dict.Strings) != 2 || doc.Dict.Strings[0] != `/Applications/Nudge & Co/<nudge>` || doc.Dict.Strings[1] != "run" {
		t.Errorf("program arguments %q", doc.Dict.Strings)
	}
	if got := strings.Join(p.Enable[0], " "); got != "launchctl bootstrap gui/501 "+p.File {
		t.Errorf("enable %q", got)
	}
}

func TestRelativeExecutableIsRefused(t *testing.T) {
	if _, err := For("linux", "nudge", "/home/dev", 1000); err == nil {
		t.Error("a relative path must be refused: the unit would not find it")
	}
	if _, err := For("plan9", "/bin/nudge", "/home/dev", 1000); err == nil {
		t.Error("an unsupported system must be an error")
	}
}
