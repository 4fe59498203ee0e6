package security

import (
	"strings"
	"testing"

	"nudge/internal/dbustest"
)

// TestNotificationShowsMarkupAsText: the provider's error text and the
// project folder carry markup; a notification server that renders body
// markup gets it escaped, so it shows the text and renders no link, no
// image and no bold.
func TestNotificationShowsMarkupAsText(t *testing.T) {
	addr := dbustest.StartBus(t)
	rec := dbustest.Record(t, addr)
	rec.SetCapabilities("body", "body-markup", "body-hyperlinks", "body-images")
	w := newWorld(t, "NUDGE_NOTIFY_DESKTOP=true", "DBUS_SESSION_BUS_ADDRESS="+addr)
	w.start()
	const markup = `<a href="https://evil.example/login">sign in again</a> <img src="file:///etc/passwd"> <b>now</b> & "x"`
	w.signInFailure("6f2d0b4c-7777-4777-8777-888888888888", "/work/<i>shop</i>", "API Error: 401 "+markup)
	n := rec.Next(t)
	for _, tag := range []string{"<a", "<img", "<b>", "<i>", `"`} {
		if strings.Contains(n.Body, tag) {
			t.Errorf("the body carries %s as markup: %q", tag, n.Body)
		}
	}
	for _, shown := range []string{"&lt;a href=&#34;https://evil.example/login&#34;&gt;sign in again&lt;/a&gt;", "&lt;img src=", "&amp;", "/work/&lt;i&gt;shop&lt;/i&gt;"} {
		if !strings.Contains(n.Body, shown) {
			t.Errorf("the body does not show %q as text: %q", shown, n.Body)
		}
	}
}
