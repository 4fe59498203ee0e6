// Package autostart installs nudge to start at login: a LaunchAgent on macOS,
// a systemd user unit on Linux.
package autostart

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Label names the LaunchAgent and the systemd unit.
const Label = "nudge"

// Plan is what installing does on this machine.
type Plan struct {
	File    string     // the LaunchAgent plist or systemd unit
	Content []byte     // what the file holds
	Enable  [][]string // commands that start it now and at every login
	Disable [][]string // commands that stop it and remove it from login
}

// For returns the plan for running exe (an absolute path) at login, for the
// user whose home is home and whose uid is uid.
func For(goos, exe, home string, uid int) (Plan, error) {
	if !filepath.IsAbs(exe) {
		return Plan{}, fmt.Errorf("autostart: %q is not an absolute path", exe)
	}
	switch goos {
	case "darwin":
		file := filepath.Join(home, "Library", "LaunchAgents", "dev.nudge."+Label+".plist")
		target := fmt.Sprintf("gui/%d", uid)
		return Plan{
			File:    file,
			Content: launchAgent("dev.nudge."+Label, exe),
			Enable:  [][]string{{"launchctl", "bootstrap", target, file}},
			Disable: [][]string{{"launchctl", "bootout", target + "/dev.nudge." + Label}},
		}, nil
	case "linux":
		return Plan{
			File:    filepath.Join(configHome(home), "systemd", "user", Label+".service"),
			Content: systemdUnit(exe),
			Enable:  [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", Label + ".service"}},
			Disable: [][]string{{"systemctl", "--user", "disable", "--now", Label + ".service"}},
		}, nil
	}
	return Plan{}, fmt.Errorf("autostart: not supported on %s", goos)
}

// Current is the plan for this machine, this user and this executable.
func Current() (Plan, error) {
	exe, err := os.Executable()
	if err != nil {
		return Plan{}, fmt.Errorf("autostart: find nudge: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return Plan{}, fmt.Errorf("autostart: find nudge: %w", err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return Plan{}, fmt.Errorf("autostart: %w", err)
	}
	return For(runtime.GOOS, exe, home, os.Getuid())
}

// Install writes the file (user-only) and enables it.
func (p Plan) Install() error {
	if err := os.MkdirAll(filepath.Dir(p.File), 0o700); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	if err := os.WriteFile(p.File, p.Content, 0o600); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	for _, c := range p.Enable {
		if err := run(c); err != nil {
			return fmt.Errorf("autostart: wrote %s, but could not enable it: %w", p.File, err)
		}
	}
	return nil
}

// Uninstall disables it and removes the file. A file that is not there is
// not an error.
func (p Plan) Uninstall() error {
	if _, err := os.Stat(p.File); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, c := range p.Disable {
		if err := run(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(p.File); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	return nil
}

func run(argv []string) error {
	var out bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}

func configHome(home string) string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	return filepath.Join(home, ".config")
}

func launchAgent(label, exe string) []byte {
	return fmt.Appendf(nil, `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key><string>%s</string>
	<key>ProgramArguments</key><array><string>%s</string><string>run</string></array>
	<key>RunAtLoad</key><true/>
	<key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
	<key>ProcessType</key><string>Interactive</string>
</dict>
</plist>
`, html.EscapeString(label), html.EscapeString(exe))
}

// systemdUnit quotes the path as systemd's command-line syntax wants.
func systemdUnit(exe string) []byte {
	quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, `%`, `%%`, `$`, `$$`).Replace(exe) + `"`
	return fmt.Appendf(nil, `[Unit]
Description=nudge: keep AI coding agents going after provider errors
After=graphical-session.target

[Service]
ExecStart=%s run
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`, quoted)
}
