// Package tray drives the menu-bar icon of the real nudge binary over a
// private D-Bus session (docs/platform.md §3): a watcher owned by the test
// receives the item's registration, reads its properties and menu, and
// clicks like a panel would. One test photographs the real menu in an
// xfce4-panel under Xvfb.
package tray

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"nudge/e2e/daemontest"
	"nudge/internal/dbustest"
)

func TestMain(m *testing.M) { daemontest.Main(m) }

// wait bounds every wait for an effect.
const wait = 10 * time.Second

// Menu labels the person sees (docs/behaviour.md §4, §6).
const (
	labelRetry    = "Retry after API errors"
	labelContinue = "Continue after usage limit"
	labelQuit     = "Quit"
)

// world is one test's machine: a home, a data folder and a session bus.
type world struct {
	t       *testing.T
	home    string
	data    string
	busAddr string
	env     []string
	opened  string // where the stand-in browser opener records its arguments
}

func newWorld(t *testing.T, busAddr string) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, home: filepath.Join(dir, "home"), data: filepath.Join(dir, "data"), busAddr: busAddr}
	if err := os.MkdirAll(w.home, 0o700); err != nil {
		t.Fatal(err)
	}
	// A stand-in browser opener that records what it was asked to open.
	bin := filepath.Join(dir, "bin")
	w.opened = filepath.Join(dir, "opened")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	opener := "#!/bin/sh\nprintf '%s\\n' \"$@\" >> " + w.opened + "\n"
	for _, name := range []string{"xdg-open", "open"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(opener), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w.env = []string{"HOME=" + w.home, "PATH=" + bin + ":" + os.Getenv("PATH"), "NUDGE_DATA_DIR=" + w.data,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"), "XDG_RUNTIME_DIR=" + dir}
	if busAddr != "" {
		w.env = append(w.env, "DBUS_SESSION_BUS_ADDRESS="+busAddr)
	}
	return w
}

// start runs `nudge run` with the world's environment plus extra.
func (w *world) start(extra ...string) *daemontest.Daemon {
	w.t.Helper()
	return daemontest.Start(w.t, append(append([]string{}, w.env...), extra...), "run")
}

// settings reads `nudge status --json` until the daemon answers.
func (w *world) settings() (retry bool, ok bool) {
	out, err := daemontest.CLI(w.env, "status", "--json")
	if err != nil || !daemontest.Ready(out) {
		return false, false
	}
	var st struct {
		Settings *struct {
			RetryEnabled bool `json:"retry_enabled"`
		} `json:"settings"`
	}
	if json.Unmarshal(out, &st) != nil || st.Settings == nil {
		return false, false
	}
	return st.Settings.RetryEnabled, true
}

// lockFree reports whether the daemon's single-instance lock is free.
func (w *world) lockFree() bool {
	f, err := os.OpenFile(filepath.Join(w.data, "nudge.lock"), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	daemontest.Eventually(t, what, wait, cond)
}

// TestTrayTogglesPersistAndQuit: the item registers, shows its title, icon
// and menu; a click on "Retry after API errors" turns retry off at once and
// for good; Quit ends the daemon cleanly; SIGTERM ends daemon and icon.
func TestTrayTogglesPersistAndQuit(t *testing.T) {
	addr := dbustest.StartBus(t)
	watcher := ownWatcher(t, addr)
	w := newWorld(t, addr)

	d := w.start("DISPLAY=:0") // the icon needs a named session; it only talks D-Bus
	item := watcher.next(t)
	eventually(t, "title", func() bool { return item.title() == "nudge" }) // docs/platform.md §3 bug 1: poll
	eventually(t, "icon", item.hasIcon)
	eventually(t, "daemon ready", func() bool { _, ok := w.settings(); return ok })

	// The first menu may come before the daemon has its settings; it
	// follows within a redraw.
	var menu layout
	var retry, cont entry
	eventually(t, "the toggles shown", func() bool {
		menu = item.layout(t)
		retry, cont = menu.find(t, labelRetry), menu.find(t, labelContinue)
		return retry.enabled && cont.enabled
	})
	var labels []string
	for _, e := range menu {
		if e.label != "" {
			labels = append(labels, e.label)
		}
	}
	want := []string{labelRetry, labelContinue, "No sessions yet", "Open Inbox…", "Pause", labelQuit}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Fatalf("menu labels:\n got %q\nwant %q", labels, want)
	}
	if retry.toggleType != "checkmark" || retry.toggleState != 1 {
		t.Fatalf("%q: %+v, want a checkmark, on by default", labelRetry, retry)
	}
	if cont.toggleType != "checkmark" || cont.toggleState != 0 {
		t.Fatalf("%q: %+v, want a checkmark, off by default", labelContinue, cont)
	}

	item.click(t, retry.id)
	eventually(t, "retry_enabled false in nudge status", func() bool { on, ok := w.settings(); return ok && !on })
	eventually(t, "the checkbox unticked", func() bool { return item.toggleState(t, retry.id) == 0 })

	// A pause from the CLI shows in the menu.
	if out, err := daemontest.CLI(w.env, "pause"); err != nil {
		t.Fatalf("nudge pause: %v %s", err, out)
	}
	eventually(t, "Resume in the menu", func() bool { return item.layout(t).has("Resume") })
	if out, err := daemontest.CLI(w.env, "resume"); err != nil {
		t.Fatalf("nudge resume: %v %s", err, out)
	}
	eventually(t, "Pause in the menu again", func() bool { return item.layout(t).has("Pause") })

	item.quit(t, menu.find(t, labelQuit).id)
	if code := d.Exit(t); code != 0 {
		t.Fatalf("Quit from the menu: exit status %d, want 0", code)
	}
	if !w.lockFree() {
		t.Fatal("the single-instance lock is still held after Quit")
	}

	// The toggle survives a restart, in the daemon and in the menu.
	d = w.start("DISPLAY=:0")
	item = watcher.next(t)
	eventually(t, "daemon ready again", func() bool { _, ok := w.settings(); return ok })
	if on, _ := w.settings(); on {
		t.Fatal("retry is on again after a restart")
	}
	eventually(t, "the checkbox still unticked after a restart", func() bool {
		return item.toggleState(t, item.layout(t).find(t, labelRetry).id) == 0
	})

	d.Cmd.Process.Signal(syscall.SIGTERM)
	if code := d.Exit(t); code != 0 {
		t.Fatalf("SIGTERM: exit status %d, want 0", code)
	}
	if !w.lockFree() {
		t.Fatal("the single-instance lock is still held after SIGTERM")
	}
}

// TestTrayShowsSessionsAndInbox: a session that needs sign-in shows in the
// menu in words, the Inbox count shows on "Open Inbox…", and the icon says
// it needs attention.
func TestTrayShowsSessionsAndInbox(t *testing.T) {
	addr := dbustest.StartBus(t)
	watcher := ownWatcher(t, addr)
	w := newWorld(t, addr)
	w.start("DISPLAY=:0")
	item := watcher.next(t)
	eventually(t, "daemon ready", func() bool { _, ok := w.settings(); return ok })
	eventually(t, "tooltip all fine", func() bool { return strings.Contains(item.tooltip(), "all fine") })

	// A Claude Code session whose turn died of a rejected API key: a copy of
	// internal/classify/testdata/samples/claude/auth401-invalid-apikey-print.jsonl (cwd /home/dev/project).
	sample, err := os.ReadFile("testdata/claude-auth401.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(w.home, ".claude", "projects", "-home-dev-project")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "72f336ac-6434-4141-82e7-554cec3ae216.jsonl"), sample, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the session and the unread entry in the menu", func() bool {
		var got []string
		for _, e := range item.layout(t) {
			got = append(got, e.label)
		}
		s := strings.Join(got, "|")
		return strings.Contains(s, "project (claude): needs sign-in") && strings.Contains(s, "Open Inbox… (1 unread)")
	})
	// Under the session, what the person was told, in the Inbox entry's words.
	out, err := daemontest.CLI(w.env, "inbox", "--json")
	var es []struct {
		What string `json:"what"`
	}
	if err != nil || json.Unmarshal(out, &es) != nil || len(es) != 1 || !strings.Contains(es[0].What, "claude /login") {
		t.Fatalf("inbox --json: %v\n%s", err, out)
	}
	if !item.layout(t).has("    " + es[0].What) {
		t.Errorf("the menu does not say %q under the session", es[0].What)
	}
	eventually(t, "tooltip needs attention", func() bool { return strings.Contains(item.tooltip(), "needs attention") })

	// "Open Inbox…" opens the Inbox window through the user-only launcher
	// page: the browser opener (a stand-in on PATH) is handed its path, never
	// the secret.
	open := item.layout(t).find(t, "Open Inbox… (1 unread)")
	item.click(t, open.id)
	var opened string
	eventually(t, "the browser opener is started", func() bool {
		b, err := os.ReadFile(w.opened)
		opened = strings.TrimSpace(string(b))
		return err == nil && opened != ""
	})
	if opened != filepath.Join(w.data, "inbox.html") {
		t.Errorf("opener got %q, want the launcher page %s", opened, filepath.Join(w.data, "inbox.html"))
	}
	secret, err := os.ReadFile(filepath.Join(w.data, "web.secret"))
	if err != nil || strings.Contains(opened, strings.TrimSpace(string(secret))) {
		t.Errorf("the secret must not be on the opener's command line (%v)", err)
	}
}

// TestTrayShowsFolderNamesAsWritten: a session's folder shows in the menu
// as written, underscores included ("my_shop", not "myshop", which a
// DBusMenu host makes of a raw label), and a bidi override from the
// record is shown replaced, never reversing what follows.
func TestTrayShowsFolderNamesAsWritten(t *testing.T) {
	addr := dbustest.StartBus(t)
	watcher := ownWatcher(t, addr)
	w := newWorld(t, addr)
	w.start("DISPLAY=:0")
	item := watcher.next(t)
	eventually(t, "daemon ready", func() bool { _, ok := w.settings(); return ok })

	sample, err := os.ReadFile("testdata/claude-auth401.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.ReplaceAll(string(sample), `"cwd":"/home/dev/project"`, `"cwd":"/home/dev/my_shop\u202egnp.exe"`)
	if moved == string(sample) {
		t.Fatal(`the sample names no "cwd":"/home/dev/project"`)
	}
	dir := filepath.Join(w.home, ".claude", "projects", "-home-dev-my-shop")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "72f336ac-6434-4141-82e7-554cec3ae216.jsonl"), []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "my_shop\uFFFDgnp.exe (claude): needs sign-in"
	var got []string
	eventually(t, "the session in the menu", func() bool {
		got = got[:0]
		for _, e := range item.layout(t) {
			got = append(got, e.label)
		}
		return strings.Contains(strings.Join(got, "|"), "(claude): needs sign-in")
	})
	if !item.layout(t).has(want) {
		t.Errorf("menu %q; want a line %q", got, want)
	}
	// nudge's own words keep theirs too.
	if !strings.Contains(strings.Join(got, "|"), "(or fix ANTHROPIC_API_KEY)") {
		t.Errorf("menu %q; want what the person was told as written", got)
	}
}

// TestTrayHeadlessWithoutSessionBus: with no session bus the daemon runs
// headless and says so (docs/platform.md §3 bug 2), never crashes.
func TestTrayHeadlessWithoutSessionBus(t *testing.T) {
	if u := fmt.Sprintf("/run/user/%d/bus", os.Getuid()); fileExists(u) {
		t.Skip("this machine's user bus at " + u + " would be found without DBUS_SESSION_BUS_ADDRESS")
	}
	w := newWorld(t, "")
	d := w.start("DISPLAY=:0")
	eventually(t, "daemon ready", func() bool { _, ok := w.settings(); return ok })
	if !strings.Contains(d.Log.String(), "tray: not available: no DBus session bus") {
		t.Fatalf("log does not say the tray is unavailable:\n%s", d.Log)
	}
	d.Cmd.Process.Signal(syscall.SIGTERM)
	if code := d.Exit(t); code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// watcher owns org.kde.StatusNotifierWatcher and passes on every item that
// registers, as the bus name that called.
type watcher struct {
	conn  *dbus.Conn
	items chan string
}

func (w *watcher) RegisterStatusNotifierItem(sender dbus.Sender, _ string) *dbus.Error {
	select {
	case w.items <- string(sender):
	default:
	}
	return nil
}

func ownWatcher(t *testing.T, addr string) *watcher {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w := &watcher{conn: conn, items: make(chan string, 16)}
	if err := conn.Export(w, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own the watcher name: %v %v", reply, err)
	}
	return w
}

// next waits for an item to register and connects to it.
func (w *watcher) next(t *testing.T) *item {
	t.Helper()
	select {
	case name := <-w.items:
		return &item{conn: w.conn, name: name}
	case <-time.After(wait):
		t.Fatalf("no StatusNotifierItem registered within %s", wait)
		return nil
	}
}

// item is a registered StatusNotifierItem, seen from the panel's side.
type item struct {
	conn *dbus.Conn
	name string
}

func (it *item) prop(name string) (dbus.Variant, error) {
	return it.conn.Object(it.name, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem." + name)
}

func (it *item) title() string {
	v, err := it.prop("Title")
	if err != nil {
		return ""
	}
	s, _ := v.Value().(string)
	return s
}

func (it *item) tooltip() string {
	v, err := it.prop("ToolTip")
	if err != nil {
		return ""
	}
	var tip struct {
		Icon   string
		Pixmap []struct {
			W, H int32
			Pix  []byte
		}
		Title, Text string
	}
	if v.Store(&tip) != nil {
		return ""
	}
	return tip.Title
}

func (it *item) hasIcon() bool {
	v, err := it.prop("IconPixmap")
	if err != nil {
		return false
	}
	var px []struct {
		W, H int32
		Pix  []byte
	}
	return v.Store(&px) == nil && len(px) > 0 && px[0].W > 0 && len(px[0].Pix) == int(4*px[0].W*px[0].H)
}

func (it *item) menu() dbus.BusObject { return it.conn.Object(it.name, "/StatusNotifierItem/menu") }

// entry is one menu line from GetLayout.
type entry struct {
	id          int32
	label       string
	enabled     bool
	toggleType  string
	toggleState int32
}

type layout []entry

// has reports whether a line says label.
func (l layout) has(label string) bool {
	for _, e := range l {
		if e.label == label {
			return true
		}
	}
	return false
}

func (l layout) find(t *testing.T, label string) entry {
	t.Helper()
	for _, e := range l {
		if e.label == label {
			return e
		}
	}
	t.Fatalf("no menu item %q in %+v", label, l)
	return entry{}
}

// shown is a DBusMenu label as a host shows it: "__" is an underscore,
// any other underscore the hidden mark of an access key.
func shown(label string) string {
	var b strings.Builder
	for i := 0; i < len(label); i++ {
		switch {
		case strings.HasPrefix(label[i:], "__"):
			b.WriteByte('_')
			i++
		case label[i] == '_':
		default:
			b.WriteByte(label[i])
		}
	}
	return b.String()
}

// layout reads the whole menu (GetLayout 0, -1, []).
func (it *item) layout(t *testing.T) layout {
	t.Helper()
	var rev uint32
	var root struct {
		ID       int32
		Props    map[string]dbus.Variant
		Children []dbus.Variant
	}
	if err := it.menu().Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{}).Store(&rev, &root); err != nil {
		t.Fatalf("GetLayout: %v", err)
	}
	var out layout
	for _, c := range root.Children {
		f, ok := c.Value().([]any)
		if !ok || len(f) != 3 {
			t.Fatalf("menu child %v: not (id, props, children)", c)
		}
		props, _ := f[1].(map[string]dbus.Variant)
		e := entry{id: f[0].(int32), enabled: true}
		for k, v := range props {
			switch k {
			case "label":
				raw, _ := v.Value().(string)
				e.label = shown(raw)
			case "enabled":
				e.enabled, _ = v.Value().(bool)
			case "toggle-type":
				e.toggleType, _ = v.Value().(string)
			case "toggle-state":
				e.toggleState, _ = v.Value().(int32)
			}
		}
		out = append(out, e)
	}
	return out
}

func (it *item) toggleState(t *testing.T, id int32) int32 {
	t.Helper()
	var v dbus.Variant
	if err := it.menu().Call("com.canonical.dbusmenu.GetProperty", 0, id, "toggle-state").Store(&v); err != nil {
		t.Fatalf("GetProperty %d toggle-state: %v", id, err)
	}
	s, _ := v.Value().(int32)
	return s
}

func (it *item) click(t *testing.T, id int32) {
	t.Helper()
	call := it.menu().Call("com.canonical.dbusmenu.Event", 0, id, "clicked", dbus.MakeVariant(int32(0)), uint32(0))
	if call.Err != nil {
		t.Fatalf("click %d: %v", id, call.Err)
	}
}

// quit clicks Quit without waiting for a reply: the app exits first.
func (it *item) quit(t *testing.T, id int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	call := it.menu().CallWithContext(ctx, "com.canonical.dbusmenu.Event", dbus.FlagNoReplyExpected, id, "clicked", dbus.MakeVariant(int32(0)), uint32(0))
	if call.Err != nil {
		t.Fatalf("click Quit: %v", call.Err)
	}
}
