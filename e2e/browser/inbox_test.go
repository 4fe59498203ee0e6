// Package browser drives the Inbox window of the real nudge binary in a
// real headless Chromium through chromedriver.
package browser

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/e2e/snoop"
	"nudge/internal/inbox"
	"nudge/internal/web"
)

func TestMain(m *testing.M) { daemontest.Main(m, snoop.Cmd) }

// xss is error text that would run script if the page put it in as markup.
const xss = `<img src=x onerror=alert(1)> <script>document.title="owned"</script>`

// world is a home with a nudge daemon in it.
type world struct {
	t    *testing.T
	home string
	data string
	env  []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, home: filepath.Join(dir, "home"), data: filepath.Join(dir, "data")}
	must(t, os.MkdirAll(w.home, 0o700))
	w.env = daemontest.Env(w.home, w.data)
	return w
}

// seed writes an Inbox entry straight into the database, as an earlier
// run of the daemon would have.
func (w *world) seed(e inbox.EntryRow) {
	w.t.Helper()
	db, err := inbox.Open(filepath.Join(w.data, "nudge.db"))
	must(w.t, err)
	defer db.Close()
	must(w.t, db.Commit(context.Background(), inbox.Batch{Entries: []inbox.EntryRow{e}}))
}

func (w *world) startDaemon() {
	w.t.Helper()
	daemontest.Start(w.t, w.env, "run", "--headless").WaitReady(w.t)
}

func (w *world) nudge(args ...string) ([]byte, error) { return daemontest.CLI(w.env, args...) }

func (w *world) entries() []web.Entry { return daemontest.Entries(w.t, w.env) }

// deadTurn writes a Claude Code transcript in /work/shop whose turn dies
// from a provider error, as the CLI writes it (docs/agents/claude.md).
func (w *world) deadTurn(session, errorText string) {
	w.t.Helper()
	daemontest.Claude(w.t, w.home, "/work/shop", session, daemontest.ClaudePrompt("build the shop"),
		daemontest.ClaudeAPIError("server_error", 500, errorText))
}

// pageEntry is what the page shows of one entry, read from its DOM.
type pageEntry struct {
	ID     string `json:"id"`
	Unread bool   `json:"unread"`
	What   string `json:"what"`
	Error  string `json:"error"`
}

const readEntries = `return Array.from(document.querySelectorAll('#entries li.entry')).map(li => ({
	id: li.dataset.id, unread: li.classList.contains('unread'),
	what: li.querySelector('.what').textContent,
	error: (li.querySelector('.error-text') || {}).textContent || ''}));`

func (b *browser) entries() []pageEntry {
	b.t.Helper()
	var es []pageEntry
	b.run(readEntries, &es)
	return es
}

func TestInboxWindow(t *testing.T) {
	w := newWorld(t)
	w.seed(inbox.EntryRow{
		Time: time.Now().Add(-5 * time.Minute), Agent: "claude", Session: "0b5e7c1d-1111-4111-8111-222222222222",
		Project: "/work/shop", What: "gave up after 3 attempts; the turn is still dead",
		ErrorText: xss, Class: "provider_error", Code: "529", Attempts: 3,
	})
	w.startDaemon()
	b := startBrowser(t)

	link := w.signInLink()
	base := link[:strings.Index(link, "#")]
	b.open(link)
	b.waitLive()
	if u := b.url(); u != base {
		t.Errorf("the address still carries the sign-in link, or is elsewhere: %s", u)
	}
	// A reload stays signed in: the token is kept in the tab.
	b.run(`window.beforeReload = true; return null`, nil)
	b.open(base)
	var reloaded bool
	b.run(`return window.beforeReload !== true`, &reloaded)
	if !reloaded {
		t.Fatal("the page did not reload")
	}
	b.waitLive()

	// The unread entry calls for attention, as on the menu-bar icon.
	daemontest.Eventually(t, "the overall look to need attention", 10*time.Second, func() bool { return b.overall() == "needs_attention: needs attention" })

	// The seeded entry, with its error text shown as text and inert.
	es := b.entries()
	if len(es) != 1 || es[0].Error != xss || !es[0].Unread || !strings.Contains(es[0].What, "gave up") {
		t.Fatalf("page entries: %+v", es)
	}
	var injected struct {
		Imgs, Scripts int
		Title         string
	}
	b.run(`return {imgs: document.querySelectorAll('img').length, scripts: document.querySelectorAll('script').length, title: document.title}`, &injected)
	if injected.Imgs != 0 || injected.Scripts != 1 || injected.Title == "owned" {
		t.Errorf("transcript text became markup: %+v", injected)
	}
	if open, text := b.alertOpen(); open {
		t.Fatalf("the error text ran script: alert %q", text)
	}
	var visible string
	b.run(`return document.body.innerText`, &visible)
	if !strings.Contains(visible, "<img src=x onerror=alert(1)>") {
		t.Errorf("the error text is not visible as text:\n%s", visible)
	}

	shots := screenshotDir(t)
	b.screenshot(filepath.Join(shots, "inbox.png"))

	// Mark read through the page; the CLI sees it.
	seeded := w.entries()[0].ID
	if es[0].ID != fmt.Sprint(seeded) {
		t.Fatalf("page entry id %s, CLI %d", es[0].ID, seeded)
	}
	b.run(`window.sameDocument = true; return null`, nil)
	b.click(fmt.Sprintf(`#entries li.entry[data-id="%d"] button.mark-read`, seeded))
	daemontest.Eventually(t, "the CLI to show the entry read", 10*time.Second, func() bool { return w.entries()[0].Read })
	daemontest.Eventually(t, "the page to show the entry read", 10*time.Second, func() bool { return !b.entries()[0].Unread })
	daemontest.Eventually(t, "the overall look to be fine once read", 10*time.Second, func() bool { return b.overall() == "all_fine: all fine" })

	// The toggle turns retry off in the daemon.
	b.click("#toggle-retry")
	daemontest.Eventually(t, "retry off in the daemon", 10*time.Second, func() bool {
		var st struct {
			Settings struct {
				RetryEnabled bool `json:"retry_enabled"`
			}
		}
		out, err := w.nudge("status", "--json")
		return err == nil && json.Unmarshal(out, &st) == nil && !st.Settings.RetryEnabled
	})

	// A new dead turn shows up without a reload.
	const session = "7d1f0a3b-3333-4333-8333-444444444444"
	w.deadTurn(session, "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment.")
	daemontest.Eventually(t, "the new entry on the page", 15*time.Second, func() bool { return len(b.entries()) == 2 })
	es = b.entries()
	if !es[0].Unread || !strings.Contains(es[0].Error, "API Error: 500") || es[1].Error != xss {
		t.Errorf("entries after the new one, newest first: %+v", es)
	}
	b.screenshot(filepath.Join(shots, "inbox-live.png"))
	var same bool
	b.run(`return window.sameDocument === true`, &same)
	if !same {
		t.Error("the page reloaded to show the new entry")
	}
	var sessionState string
	b.run(`const li = document.querySelector('#sessions li[data-session="`+session+`"]'); return li ? li.querySelector('.state').textContent : ''`, &sessionState)
	if sessionState != "failed" {
		t.Errorf("the session's state on the page: %q", sessionState)
	}

	// A parent agent asks about the child session, with this run's secret.
	var one struct{ Agent, State string }
	getJSON(t, base+"api/sessions/"+session, w.secret(), &one)
	if one.Agent != "claude" || one.State != "failed" {
		t.Errorf("GET /api/sessions/%s: %+v", session, one)
	}

	// Mark all read, then clear, from the page.
	b.click("#read-all")
	daemontest.Eventually(t, "all read", 10*time.Second, func() bool {
		for _, e := range w.entries() {
			if !e.Read {
				return false
			}
		}
		return true
	})
	b.click("#clear")
	b.click("#clear") // the second click confirms
	daemontest.Eventually(t, "cleared", 10*time.Second, func() bool { return len(w.entries()) == 0 && len(b.entries()) == 0 })

	// A page load without a sign-in link of its own is not let in, and a
	// sign-in link is good once.
	b.run(`sessionStorage.clear(); return null`, nil)
	b.open("about:blank")
	b.open(base)
	b.waitSignedOut("not signed in")
	b.open("about:blank")
	b.open(link)
	b.waitSignedOut("already used")

	// The launcher that `nudge inbox --open` writes signs a browser in
	// without the link on a command line.
	w.fakeOpener()
	_, err := w.nudge("inbox", "--open")
	must(t, err)
	b.open("file://" + filepath.Join(w.data, "inbox.html"))
	b.waitLive()
}

// signInLink asks the daemon for a one-time sign-in link to its page.
func (w *world) signInLink() string {
	w.t.Helper()
	out, err := w.nudge("inbox", "--url")
	must(w.t, err)
	link := strings.TrimSpace(string(out))
	if !strings.HasPrefix(link, "http://127.0.0.1:") || !strings.Contains(link, "/#launch=") {
		w.t.Fatalf("nudge inbox --url: %q", link)
	}
	return link
}

// secret is the daemon's secret of this run, as other tools read it.
func (w *world) secret() string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.data, "web.secret"))
	must(w.t, err)
	return strings.TrimSpace(string(b))
}

// fakeOpener puts a browser opener on the CLI's PATH that records its
// arguments in the returned file, and gives the CLI a display to open on.
func (w *world) fakeOpener() string {
	w.t.Helper()
	bin := w.t.TempDir()
	args := filepath.Join(bin, "args")
	must(w.t, os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+args+"\n"), 0o755))
	w.env = append(w.env, "PATH="+bin+":"+os.Getenv("PATH"), "DISPLAY=:0")
	return args
}

// waitLive waits until the page is signed in and shows the daemon's data.
// overall is the overall look the page shows, as "class: words".
func (b *browser) overall() string {
	var s string
	b.run(`const p = document.getElementById('overall'); return p.className.replace('pill ', '') + ': ' + p.textContent`, &s)
	return s
}

func (b *browser) waitLive() {
	b.t.Helper()
	daemontest.Eventually(b.t, "the page signed in and live", 15*time.Second, func() bool {
		var live bool
		b.run(`return !!document.body && document.body.dataset.live === '1'`, &live)
		return live
	})
}

// waitSignedOut waits until the page says it is not signed in, and why.
func (b *browser) waitSignedOut(why string) {
	b.t.Helper()
	var text string
	daemontest.Eventually(b.t, "the page to say it is signed out ("+why+")", 15*time.Second, func() bool {
		b.run(`const p = document.getElementById('signed-out'); return p && !p.hidden ? p.textContent : ''`, &text)
		return strings.Contains(text, why)
	})
	var live string
	b.run(`return document.body.dataset.live || ''`, &live)
	if live == "1" {
		b.t.Errorf("signed out (%q), yet live", text)
	}
}

func TestInboxOpenUsesLauncher(t *testing.T) {
	w := newWorld(t)
	w.startDaemon()
	args := w.fakeOpener()
	_, err := w.nudge("inbox", "--open")
	must(t, err)
	var got []byte
	daemontest.Eventually(t, "xdg-open to run", 10*time.Second, func() bool {
		got, err = os.ReadFile(args)
		return err == nil && len(got) > 0
	})
	if strings.TrimSpace(string(got)) != filepath.Join(w.data, "inbox.html") {
		t.Fatalf("xdg-open got %q", got)
	}
	launcher, err := os.ReadFile(filepath.Join(w.data, "inbox.html"))
	must(t, err)
	link := w.signInLink()
	base := link[:strings.Index(link, "#")]
	if !strings.Contains(string(launcher), base+"#launch=") || strings.Contains(string(launcher), link) {
		t.Fatalf("the launcher must open its own one-time link to %s:\n%s", base, launcher)
	}
}

func TestInboxCLIChangesEntries(t *testing.T) {
	w := newWorld(t)
	for _, text := range []string{"one", "two", "three"} {
		w.seed(inbox.EntryRow{Time: time.Now(), Agent: "claude", Session: "s", What: "failed", ErrorText: text})
	}
	check := func(step string, wantRead []bool) {
		t.Helper()
		es := w.entries()
		if len(es) != len(wantRead) {
			t.Fatalf("%s: %d entries, want %d", step, len(es), len(wantRead))
		}
		for i, e := range es {
			if e.Read != wantRead[i] {
				t.Fatalf("%s: entry %d read=%v", step, e.ID, e.Read)
			}
		}
	}
	// Without a daemon the CLI changes the database itself.
	ids := w.entries()
	_, err := w.nudge("inbox", "read", fmt.Sprint(ids[2].ID))
	must(t, err)
	check("read without daemon", []bool{false, false, true})
	if _, err := w.nudge("inbox", "read", "99999"); err == nil || !strings.Contains(err.Error(), "no Inbox entry 99999") {
		t.Fatalf("unknown id: %v", err)
	}
	// With one, through the daemon.
	w.startDaemon()
	_, err = w.nudge("inbox", "read", fmt.Sprint(ids[0].ID))
	must(t, err)
	check("read with daemon", []bool{true, false, true})
	if _, err := w.nudge("inbox", "read", "99999"); err == nil || !strings.Contains(err.Error(), "no Inbox entry 99999") {
		t.Fatalf("unknown id with daemon: %v", err)
	}
	_, err = w.nudge("inbox", "read-all")
	must(t, err)
	check("read-all", []bool{true, true, true})
	_, err = w.nudge("inbox", "clear")
	must(t, err)
	check("clear", nil)
}

func getJSON(t *testing.T, url, secret string, out any) { sendJSON(t, "GET", url, secret, out) }

func postJSON(t *testing.T, url, secret string, out any) { sendJSON(t, "POST", url, secret, out) }

// sendJSON sends a request with a bearer token and decodes the JSON answer.
func sendJSON(t *testing.T, method, url, secret string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %s", method, url, resp.Status)
	}
	must(t, json.NewDecoder(resp.Body).Decode(out))
}

// screenshot saves a PNG of the page to path and checks it shows something.
func (b *browser) screenshot(path string) {
	b.t.Helper()
	var s string
	b.do("GET", "/screenshot", nil, &s)
	shot, err := base64.StdEncoding.DecodeString(s)
	must(b.t, err)
	checkNotBlank(b.t, shot)
	must(b.t, os.WriteFile(path, shot, 0o644))
	b.t.Logf("screenshot: %s", path)
}

// checkNotBlank fails unless the PNG shows something: a fair share of its
// pixels differ from the background.
func checkNotBlank(t *testing.T, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	must(t, err)
	bounds := img.Bounds()
	if bounds.Dx() < 400 || bounds.Dy() < 300 {
		t.Fatalf("screenshot is %v", bounds)
	}
	bg := img.At(bounds.Min.X, bounds.Min.Y)
	differ, total := 0, 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 3 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 3 {
			total++
			if !sameColor(img.At(x, y), bg) {
				differ++
			}
		}
	}
	if differ*100 < total {
		t.Fatalf("screenshot looks blank: %d of %d sampled pixels differ from the background", differ, total)
	}
}

func sameColor(a, b color.Color) bool {
	r1, g1, b1, _ := a.RGBA()
	r2, g2, b2, _ := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2
}

func screenshotDir(t *testing.T) string {
	if d := os.Getenv("NUDGE_TEST_SCREENSHOTS"); d != "" {
		must(t, os.MkdirAll(d, 0o755))
		return d
	}
	return t.TempDir()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
