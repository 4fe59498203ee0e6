package notify

import (
	"strconv"
	"strings"
	"testing"

	"nudge/internal/dbustest"
	"nudge/internal/testenv"
)

// markup is error text that a server with body markup would render: a
// link, an image from a local file, bold.
const markup = `<a href="https://evil.example/">sign in here</a> <img src="file:///etc/passwd"> <b>bold</b> & 'q'`

// TestDesktopBodyMarkup: a server that renders body markup gets the
// transcript's text escaped, so it shows the text and renders nothing;
// the title, never markup, stays as it is.
func TestDesktopBodyMarkup(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	rec := dbustest.Record(t, bus.Addr)
	rec.SetCapabilities("body", "body-markup", "actions")
	n, _ := newNotifier(t, Config{Desktop: true})
	n.Send(Message{Title: "nudge: claude <needs> you", Body: "/work/shop: " + markup + "\x1b]52;c;eA==\x07"})
	got := rec.Next(t)
	closeWithin(t, n)
	want := `/work/shop: &lt;a href=&#34;https://evil.example/&#34;&gt;sign in here&lt;/a&gt; &lt;img src=&#34;file:///etc/passwd&#34;&gt; ` +
		`&lt;b&gt;bold&lt;/b&gt; &amp; &#39;q&#39;` + "\uFFFD]52;c;eA==\uFFFD"
	if got.Body != want || got.Summary != "nudge: claude <needs> you" {
		t.Errorf("summary %q body %q\nwant body %q", got.Summary, got.Body, want)
	}
}

func TestDesktopText(t *testing.T) {
	for _, c := range []struct {
		in     string
		markup bool
		want   string
	}{
		{"plain & simple", false, "plain & simple"},
		{"plain & simple", true, "plain &amp; simple"},
		{"two\nlines\ttab", false, "two lines tab"},
		{"<i>x</i> \"y\"", true, "&lt;i&gt;x&lt;/i&gt; &#34;y&#34;"},
		{"esc\x1b[2J bell\x07 rlo\u202e zwsp\u200b nbsp\u00a0", false, "esc\uFFFD[2J bell\uFFFD rlo\uFFFD zwsp\uFFFD nbsp\uFFFD"},
	} {
		if got := desktopText(c.in, c.markup); got != c.want {
			t.Errorf("desktopText(%q, %v) = %q, want %q", c.in, c.markup, got, c.want)
		}
	}
}

// FuzzDesktopText: whatever the text, Go's quoting of it (what the macOS
// AppleScript fallback gets) has no escape but \" and \\, it never starts
// like an option (what notify-send gets), and with markup on, no character
// that starts markup is left.
func FuzzDesktopText(f *testing.F) {
	for _, s := range []string{"plain", "<b>x</b>", "\x1b]0;t\x07", "a\u00a0b", "\xff", `"\`, "--icon=x", "\n-u"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		plain := desktopText(in, false)
		q := strconv.Quote(plain)
		rest := strings.NewReplacer(`\"`, "", `\\`, "").Replace(q[1 : len(q)-1])
		if strings.Contains(rest, `\`) {
			t.Fatalf("desktopText(%q) = %q quotes as %s", in, plain, q)
		}
		if strings.HasPrefix(plain, "-") {
			t.Fatalf("desktopText(%q) = %q starts like an option", in, plain)
		}
		if m := desktopText(in, true); strings.ContainsAny(m, `<>"'`) {
			t.Fatalf("desktopText(%q, markup) = %q", in, m)
		}
	})
}
