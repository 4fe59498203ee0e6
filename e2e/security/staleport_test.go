package security

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/e2e/otheruser"
	"nudge/e2e/snoop"
	"nudge/internal/inbox"
)

// TestStalePortGetsNothing: after a crash (kill -9) another user takes
// the port nudge's Inbox window had. The CLI never sends anything there —
// it talks to the daemon over its same-user socket only — and says nudge
// is not running; the secret of the crashed run opens nothing once nudge
// runs again. As root the listener is a second local user; elsewhere this
// user, which changes nothing about what the CLI sends it.
func TestStalePortGetsNothing(t *testing.T) {
	w := newWorld(t)
	d := w.start()
	page := w.pageAddress()
	oldSecret := w.secret()
	d.Cmd.Process.Kill()
	d.Exit(t)

	var attacker *otheruser.User
	if os.Geteuid() == 0 {
		attacker = otheruser.Create(t)
	}
	stale := snoop.Start(t, daemontest.Bin(snoop.Cmd), strings.TrimSuffix(strings.TrimPrefix(page, "http://"), "/"), attacker)

	w.seed(inbox.EntryRow{Time: time.Now(), Agent: "claude", Session: "s", What: "failed", ErrorText: "boom"})
	for _, args := range [][]string{
		{"inbox", "read-all"}, {"inbox", "read", "1"}, {"inbox", "clear"}, {"inbox"}, {"status"}, {"doctor"},
	} {
		if out, err := w.nudge(args...); err != nil {
			t.Errorf("nudge %v after the crash: %v\n%s", args, err, out)
		}
	}
	for _, args := range [][]string{{"inbox", "--url"}, {"inbox", "--open"}, {"pause"}} {
		out, err := w.nudge(args...)
		if err == nil || !strings.Contains(err.Error(), "nudge is not running") {
			t.Errorf("nudge %v after the crash: %v, %q; want \"nudge is not running\"", args, err, out)
		}
	}
	if got := stale.Requests(t); len(got) > 0 {
		t.Errorf("the listener on the old port %s was contacted: %+v", page, got)
	}
	// The listener does record what comes (so that the silence above means something).
	if resp, err := http.Get("http://" + stale.Addr + "/probe"); err == nil {
		resp.Body.Close()
	}
	if got := stale.Requests(t); len(got) == 0 {
		t.Fatal("the listener records nothing")
	}

	// Running again, nudge has a new secret; the old one opens nothing.
	w.start()
	if s := w.secret(); s == oldSecret {
		t.Fatal("the secret did not change at the restart")
	}
	req, err := http.NewRequest("GET", w.pageAddress()+"api/entries", nil)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+oldSecret)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the crashed run's secret: %s, want 401", resp.Status)
	}
}
