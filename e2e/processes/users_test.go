//go:build linux

package processes

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"nudge/internal/testenv"
)

// Another local user runs an `opencode serve --port 0` whose environment
// names the victim's database and whose stream tells of a failed turn of
// a session that database holds, in the victim's project, where the
// victim's OpenCode TUI runs in tmux. nudge (as the victim, with headless
// resume on) never opens that stream nor asks that server anything, never
// takes the session, never types into the victim's pane, never runs
// `opencode run`; it follows the victim's own server beside it and
// continues that one's failed turn, which shows it was looking.
func TestAnotherUsersOpenCodeServerIsNeverFollowed(t *testing.T) {
	testenv.Need(t, "tmux")
	m := newMachine(t)
	attacker := m.newUser("atk")
	victim := m.me("victim")
	project := filepath.Join(victim.home, "project")
	m.mkdir(project, victim)
	const theirSession = "ses_dd44a27b2ffeAttackerSes01"
	m.openCodeDB(victim, map[string]string{theirSession: project})
	claimsVictim := append(attacker.env(), "XDG_DATA_HOME="+filepath.Join(victim.home, ".local", "share"), "HOME="+victim.home)
	theirs := m.startServer(attacker, "theirs", claimsVictim, failedTurn(t, theirSession, project))
	own := m.startServer(victim, "own", victim.env(), failedTurn(t, openCodeSession, openCodeFolder))

	// The victim's OpenCode TUI in the project the stream names: a shell
	// under the name opencode, whose typed lines land in a file.
	received := filepath.Join(m.dir, "pane-received")
	tui := filepath.Join(m.dir, "bin", "tui", "opencode")
	m.mkdir(filepath.Dir(tui), nil)
	if err := os.Symlink("/bin/sh", tui); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(m.dir, "tmux.sock")
	pane := exec.Command("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "tui", "-c", project,
		tui+" -c 'cat >> "+received+"; exit 0'")
	if out, err := pane.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })

	resume := m.recorder("opencode")
	d := m.startNudge(victim, "inject: {resume: {opencode: true}}\n", resume.path())

	// The victim's own server: followed, its dead turn continued through
	// its API.
	eventually(t, "the victim's own server to get the continuation", 60*time.Second, func() bool {
		return strings.Contains(own.requests(), "POST /session/"+openCodeSession+"/prompt_async")
	})
	time.Sleep(5 * time.Second) // two more retry delays: anything due would have happened
	if r := theirs.requests(); r != "" {
		t.Errorf("the other user's server was asked:\n%s", r)
	}
	if st := d.cli("status", "--json"); strings.Contains(st, theirSession) || !strings.Contains(st, openCodeSession) {
		t.Errorf("status (want only the victim's own session):\n%s", st)
	}
	if b, _ := os.ReadFile(received); len(b) != 0 {
		t.Errorf("typed into the victim's pane:\n%s", b)
	}
	if calls := resume.text(); calls != "" {
		t.Errorf("opencode run was started:\n%s", calls)
	}
	log := d.logText()
	if namesPID(log, theirs.cmd.Process.Pid) {
		t.Errorf("the daemon's log names the other user's process %d", theirs.cmd.Process.Pid)
	}
	if !namesPID(log, own.cmd.Process.Pid) {
		t.Errorf("the daemon's log does not name the victim's own server")
	}
}

// namesPID reports whether a JSON log names pid as a "pid" attribute.
func namesPID(log string, pid int) bool {
	return regexp.MustCompile(`"pid":` + strconv.Itoa(pid) + `\b`).MatchString(log)
}

// nudge run by a person never follows a server root runs, even one that
// names the person's database; the person's own server beside it is.
func TestRootsOpenCodeServerIsNotFollowedByAPerson(t *testing.T) {
	m := newMachine(t)
	person := m.newUser("person")
	root := m.me("root")
	m.openCodeDB(person, nil)
	claimsPerson := append(root.env(), "XDG_DATA_HOME="+filepath.Join(person.home, ".local", "share"))
	roots := m.startServer(root, "roots", claimsPerson, failedTurn(t, openCodeSession, openCodeFolder))
	own := m.startServer(person, "own", person.env(), failedTurn(t, openCodeSession, openCodeFolder))
	m.startNudge(person, "")
	eventually(t, "the person's own server to be followed", 30*time.Second, func() bool {
		return strings.Contains(own.requests(), "GET /global/event")
	})
	time.Sleep(2 * time.Second)
	if r := roots.requests(); r != "" {
		t.Errorf("root's server was asked:\n%s", r)
	}
}
