// Package autostart installs nudge to start at login: a LaunchAgent on macOS,
// a systemd user unit on Linux.
package autostart

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"

	"nudge/internal/config"
)

// Label names the systemd unit; BundleID names the LaunchAgent and the app
// bundle (docs/platform.md §2), so macOS shows one program in Login Items
// and in Notification Center.
const (
	Label    = "nudge"
	BundleID = "dev.nudge.nudge"
)

// ServiceFlag is the `nudge run` flag the login service starts nudge with:
// a daemon that finds another one running exits 0, so the service manager
// does not restart it in a loop.
const ServiceFlag = "service"

// Settings are what the installed service runs with: the settings in use
// when `nudge install` ran.
type Settings struct {
	Exe    string   // the absolute path of nudge
	Config string   // the config file given with --config, absolute ("" = none)
	Env    []string // NUDGE_* variables, KEY=value
}

// Plan is what installing does on this machine.
type Plan struct {
	File    string // the LaunchAgent plist or systemd unit
	Content []byte // what the file holds
	// Links are files the service manager makes when enabling, removed by
	// Uninstall when the manager cannot remove them itself.
	Links []string
	// Reach succeeds when the service manager of this login answers.
	Reach []string
	// Enable makes the file start nudge at every login; Start starts it
	// now (after a change: again); Active tells whether it runs now.
	Enable [][]string
	Start  [][]string
	Active []string
	// Disable stops it and removes it from login.
	Disable [][]string
	// NoManager says what to do when Reach fails.
	NoManager string
}

// For returns the plan for running s at login, for the user whose home is
// home and whose uid is uid.
func For(goos string, s Settings, home string, uid int) (Plan, error) {
	if !filepath.IsAbs(s.Exe) {
		return Plan{}, fmt.Errorf("autostart: %q is not an absolute path", s.Exe)
	}
	if s.Config != "" && !filepath.IsAbs(s.Config) {
		return Plan{}, fmt.Errorf("autostart: config file %q is not an absolute path", s.Config)
	}
	for _, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || !strings.HasPrefix(k, "NUDGE_") {
			return Plan{}, fmt.Errorf("autostart: %q is not a NUDGE_ variable", kv)
		}
	}
	argv := []string{s.Exe, "run", "--" + ServiceFlag}
	if s.Config != "" {
		argv = append(argv, "--config", s.Config)
	}
	for _, v := range append(slices.Clone(argv), s.Env...) {
		if err := carriable(v); err != nil {
			return Plan{}, err
		}
	}
	switch goos {
	case "darwin":
		file := filepath.Join(home, "Library", "LaunchAgents", BundleID+".plist")
		domain := fmt.Sprintf("gui/%d", uid)
		logs := filepath.Join(home, "Library", "Logs", "nudge")
		return Plan{
			File:    file,
			Content: launchAgent(argv, s.Env, logs),
			Reach:   []string{"launchctl", "print", domain},
			// A plist in ~/Library/LaunchAgents is loaded at every login.
			Start:     [][]string{{"launchctl", "bootout", domain + "/" + BundleID}, {"launchctl", "bootstrap", domain, file}},
			Active:    []string{"launchctl", "print", domain + "/" + BundleID},
			Disable:   [][]string{{"launchctl", "bootout", domain + "/" + BundleID}},
			NoManager: "launchd does not answer for this login (is this a GUI login?)",
		}, nil
	case "linux":
		dir := filepath.Join(configHome(home), "systemd", "user")
		unit := Label + ".service"
		return Plan{
			File:      filepath.Join(dir, unit),
			Content:   systemdUnit(argv, s.Env),
			Links:     []string{filepath.Join(dir, "default.target.wants", unit)},
			Reach:     []string{"systemctl", "--user", "show-environment"},
			Enable:    [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", unit}},
			Start:     [][]string{{"systemctl", "--user", "restart", unit}},
			Active:    []string{"systemctl", "--user", "is-active", "--quiet", unit},
			Disable:   [][]string{{"systemctl", "--user", "disable", "--now", unit}},
			NoManager: "no systemd user instance answers for this login; start `nudge run` from your desktop's autostart instead, or run `loginctl enable-linger` and log in again",
		}, nil
	}
	return Plan{}, fmt.Errorf("autostart: not supported on %s", goos)
}

// Current is the plan for this machine, this user and this executable,
// with the given config file and this process's NUDGE_* variables.
func Current(config string) (Plan, error) {
	exe, err := os.Executable()
	if err != nil {
		return Plan{}, fmt.Errorf("autostart: find nudge: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return Plan{}, fmt.Errorf("autostart: find nudge: %w", err)
	}
	if config != "" {
		if config, err = filepath.Abs(config); err != nil {
			return Plan{}, fmt.Errorf("autostart: config file: %w", err)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return Plan{}, fmt.Errorf("autostart: %w", err)
	}
	env, err := nudgeEnv(os.Environ())
	if err != nil {
		return Plan{}, err
	}
	return For(runtime.GOOS, Settings{Exe: exe, Config: config, Env: env}, home, os.Getuid())
}

// nudgeEnv is the NUDGE_* variables of env, sorted, a file or folder
// named relative to the working folder made absolute: the service starts
// in another.
func nudgeEnv(env []string) ([]string, error) {
	var out []string
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "NUDGE_") || !ok {
			continue
		}
		if value != "" && !filepath.IsAbs(value) && config.IsPathVariable(name) {
			abs, err := filepath.Abs(value)
			if err != nil {
				return nil, fmt.Errorf("autostart: %s: %w", name, err)
			}
			kv = name + "=" + abs
		}
		out = append(out, kv)
	}
	slices.Sort(out)
	return out, nil
}

// Outcome says what Install did.
type Outcome int

// The outcomes of Install.
const (
	Installed      Outcome = iota // written and started
	Unchanged                     // already installed as it is, and running
	StartsAtLogin                 // written; another nudge runs now, so it starts at the next login
	NotInstalled                  // Uninstall: there was nothing to remove
	Removed                       // Uninstall: removed
	RemovedNoReach                // Uninstall: file removed; the manager did not answer, so nothing was stopped
)

// Install writes the file (user-only), enables it and starts it, unless
// another nudge is running now (otherRunning) that the service did not
// start: then the service takes over at the next login. When enabling
// fails, the file is put back as it was. It is safe to run again.
func (p Plan) Install(otherRunning bool) (Outcome, error) {
	if err := run(p.Reach); err != nil {
		return 0, fmt.Errorf("autostart: %s; nothing was installed (%w)", p.NoManager, err)
	}
	old, err := os.ReadFile(p.File)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("autostart: %w", err)
	}
	active := p.Active != nil && run(p.Active) == nil
	if existed && bytes.Equal(old, p.Content) && active {
		return Unchanged, nil
	}
	if err := writeFile(p.File, p.Content); err != nil {
		return 0, err
	}
	steps := p.Enable
	if !otherRunning || active {
		steps = append(slices.Clip(steps), p.Start...)
	}
	for i, c := range steps {
		err := run(c)
		if err == nil || i < len(steps)-1 && isBootout(c) {
			continue // launchd: nothing loaded yet is fine before a bootstrap
		}
		undo := os.Remove(p.File)
		if existed {
			undo = writeFile(p.File, old)
		}
		if undo != nil {
			return 0, fmt.Errorf("autostart: could not enable %s (%w), nor put it back: %w", p.File, err, undo)
		}
		return 0, fmt.Errorf("autostart: could not enable %s, so it was left as it was: %w", p.File, err)
	}
	if otherRunning && !active {
		return StartsAtLogin, nil
	}
	return Installed, nil
}

func isBootout(argv []string) bool {
	return len(argv) > 1 && argv[0] == "launchctl" && argv[1] == "bootout"
}

// Uninstall stops and disables the service and removes its files. When the
// service manager does not answer, the files are removed all the same.
func (p Plan) Uninstall() (Outcome, error) {
	if _, err := os.Lstat(p.File); errors.Is(err, fs.ErrNotExist) {
		return NotInstalled, nil
	}
	outcome := Removed
	if run(p.Reach) != nil {
		outcome = RemovedNoReach
	} else {
		for _, c := range p.Disable {
			if err := run(c); err != nil && !isBootout(c) {
				return 0, fmt.Errorf("autostart: %w; %s was left in place", err, p.File)
			}
		}
	}
	for _, f := range append([]string{p.File}, p.Links...) {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("autostart: %w", err)
		}
	}
	return outcome, nil
}

// writeFile replaces path with content, user-only, in one rename.
func writeFile(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".nudge-*")
	if err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	_, werr := tmp.Write(content)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("autostart: write %s: %w", path, werr)
	}
	return nil
}

func run(argv []string) error {
	var out bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.Join(argv, " ") + ": " + err.Error()
		if o := bytes.TrimSpace(out.Bytes()); len(o) > 0 {
			msg += ": " + string(o)
		}
		return errors.New(msg)
	}
	return nil
}

func configHome(home string) string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	return filepath.Join(home, ".config")
}

// carriable refuses a setting a service file cannot hold as it is: text
// that is not UTF-8, or holds a control character (a plist is XML, which
// has no way to write most of them; in a unit file they are a mistake).
func carriable(v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("autostart: %q is not UTF-8 text, which a service file cannot carry", v)
	}
	for _, r := range v {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return fmt.Errorf("autostart: %q holds a control character (%U), which a service file cannot carry: set it without one", v, r)
		}
	}
	return nil
}

// launchAgent is the LaunchAgent plist: started at login, restarted after
// a failure (not after a clean exit), its own output (panics, start-up
// errors) kept beside nudge's log.
func launchAgent(argv, env []string, logs string) []byte {
	var b strings.Builder
	str := func(s string) { b.WriteString("<string>" + html.EscapeString(s) + "</string>") }
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>`)
	str(BundleID)
	b.WriteString("\n\t<key>AssociatedBundleIdentifiers</key>")
	str(BundleID)
	b.WriteString("\n\t<key>ProgramArguments</key><array>")
	for _, a := range argv {
		str(a)
	}
	b.WriteString("</array>\n")
	if len(env) > 0 {
		b.WriteString("\t<key>EnvironmentVariables</key><dict>")
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			b.WriteString("<key>" + html.EscapeString(k) + "</key>")
			str(v)
		}
		b.WriteString("</dict>\n")
	}
	b.WriteString("\t<key>StandardOutPath</key>")
	str(filepath.Join(logs, "launchd.log"))
	b.WriteString("\n\t<key>StandardErrorPath</key>")
	str(filepath.Join(logs, "launchd.log"))
	b.WriteString(`
	<key>RunAtLoad</key><true/>
	<key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
	<key>ProcessType</key><string>Interactive</string>
</dict>
</plist>
`)
	return []byte(b.String())
}

// systemdUnit is the user unit; values are quoted as systemd's
// command-line and Environment= syntax want (systemd.syntax(7)): both
// expand % specifiers, only a command line expands $ variables
// (systemd.exec(5): in Environment= "$" has no special meaning).
func systemdUnit(argv, env []string) []byte {
	quote := func(s string, more ...string) string {
		return `"` + strings.NewReplacer(append([]string{`\`, `\\`, `"`, `\"`, `%`, `%%`, "\n", `\n`}, more...)...).Replace(s) + `"`
	}
	var exec, vars []string
	for _, a := range argv {
		exec = append(exec, quote(a, `$`, `$$`))
	}
	for _, kv := range env {
		vars = append(vars, "Environment="+quote(kv)+"\n")
	}
	return fmt.Appendf(nil, `[Unit]
Description=nudge: keep AI coding agents going after provider errors
After=graphical-session.target

[Service]
%sExecStart=%s
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`, strings.Join(vars, ""), strings.Join(exec, " "))
}
