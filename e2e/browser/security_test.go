package browser

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/e2e/otheruser"
	"nudge/e2e/snoop"
	"nudge/internal/inbox"
)

// TestOtherPortsGetNothing: a browser signed in to the Inbox window then
// visits a dev server on another port of 127.0.0.1 (an agent may start
// one from a repository nobody checked). Browsers send cookies to every
// port of a host, so the page keeps no credential in a cookie: the dev
// server receives no secret and no token of any kind, and the page it
// serves can neither read the Inbox nor change it (docs/security.md).
// As root the dev server runs as a second local user; elsewhere as this
// one, which changes nothing about what the browser sends it.
func TestOtherPortsGetNothing(t *testing.T) {
	w := newWorld(t)
	w.seed(inbox.EntryRow{Time: time.Now(), Agent: "claude", Session: "s", What: "failed", ErrorText: "private error text"})
	w.startDaemon()
	var attacker *otheruser.User
	if os.Geteuid() == 0 {
		attacker = otheruser.Create(t)
	}
	dev := snoop.Start(t, daemontest.Bin(snoop.Cmd), "127.0.0.1:0", attacker)
	b := startBrowser(t)

	link := w.signInLink()
	base := link[:strings.Index(link, "#")]
	b.open(link)
	b.waitLive()
	var stored struct {
		Cookie, Token string
		Local         int
	}
	b.run(`return {cookie: document.cookie, token: sessionStorage.getItem('nudge.page') || '', local: localStorage.length}`, &stored)
	if stored.Token == "" || stored.Cookie != "" || stored.Local != 0 {
		t.Fatalf("the signed-in page keeps %+v; want only a token in sessionStorage", stored)
	}
	// An event-stream ticket, as one travels.
	ticket := w.bearerPOST(base+"api/events/ticket", stored.Token)

	// The person follows a link to the dev server, in the same tab.
	b.open("http://" + dev.Addr + "/?target=" + base)
	daemontest.Eventually(t, "the dev server's page to report", 20*time.Second, func() bool {
		for _, r := range dev.Requests(t) {
			if r.URL == "/report" {
				return true
			}
		}
		return false
	})

	secrets := map[string]string{
		"the secret": w.secret(), "the page token": stored.Token, "the sign-in link": link[strings.Index(link, "#launch=")+8:],
		"an event ticket": ticket, "an error text": "private error text",
	}
	if leaks := dev.Leaks(t, secrets); len(leaks) > 0 {
		t.Errorf("the dev server received %v", leaks)
	}
	var report map[string]string
	for _, r := range dev.Requests(t) {
		if c := r.Header["Cookie"]; len(c) > 0 {
			t.Errorf("the dev server received a cookie on %s %s: %q", r.Method, r.URL, c)
		}
		if r.URL == "/report" {
			must(t, json.Unmarshal([]byte(r.Body), &report))
		}
	}
	t.Logf("what the dev server's page got: %v", report)
	for _, p := range []string{"api/entries", "api/status", "api/events"} {
		if !strings.HasPrefix(report[p], "error") && !strings.HasPrefix(report[p], "401") && !strings.HasPrefix(report[p], "403") {
			t.Errorf("the dev server's page read %s: %q", p, report[p])
		}
	}
	if es := w.entries(); len(es) != 1 || es[0].Read {
		t.Errorf("the dev server's page changed the Inbox: %+v", es)
	}
}

// bearerPOST posts to url with a bearer token and returns the one string
// value of the JSON object it answers.
func (w *world) bearerPOST(url, token string) string {
	w.t.Helper()
	var got map[string]string
	postJSON(w.t, url, token, &got)
	for _, v := range got {
		return v
	}
	w.t.Fatalf("POST %s answered nothing", url)
	return ""
}
