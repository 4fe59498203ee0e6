package browser

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
)

// storyLine is one line of the timeline as the page shows it, read from
// its DOM.
type storyLine struct {
	Kind  string `json:"kind"`
	Tone  string `json:"tone"`
	Text  string `json:"text"`
	Quote string `json:"quote"`
}

const readTimeline = `const tl = document.getElementById('timeline');
return {open: !tl.hidden, session: tl.dataset.session || '', loaded: tl.dataset.loaded === '1',
	who: document.getElementById('timeline-who').textContent,
	todo: document.getElementById('timeline-todo').hidden ? '' : document.getElementById('timeline-todo').textContent,
	lines: Array.from(document.querySelectorAll('#timeline-lines li.line')).map(li => ({
		kind: li.dataset.kind, tone: li.dataset.tone || '',
		text: li.querySelector('.text').textContent,
		quote: (li.querySelector('.quote') || {}).textContent || ''}))};`

type timelineView struct {
	Open    bool        `json:"open"`
	Session string      `json:"session"`
	Loaded  bool        `json:"loaded"`
	Who     string      `json:"who"`
	Todo    string      `json:"todo"`
	Lines   []storyLine `json:"lines"`
}

func (b *browser) timeline() timelineView {
	b.t.Helper()
	var v timelineView
	b.run(readTimeline, &v)
	return v
}

// has reports whether a line of kind (and tone, when given) contains text.
func (v timelineView) has(kind, tone, text string) bool {
	for _, l := range v.Lines {
		if l.Kind == kind && (tone == "" || l.Tone == tone) && strings.Contains(l.Text, text) {
			return true
		}
	}
	return false
}

func (v timelineView) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "open %v session %q who %q todo %q\n", v.Open, v.Session, v.Who, v.Todo)
	for _, l := range v.Lines {
		fmt.Fprintf(&b, "  %-8s %-6s %s | %s\n", l.Kind, l.Tone, l.Text, l.Quote)
	}
	return b.String()
}

// The Inbox window tells a session's story: a click on an entry or a
// session shows its timeline (what `nudge explain` prints) in words, with
// the attempt's place and reason, the agent's own text shown as text, the
// reset time of a usage limit and what to do; it follows new records live.
func TestTimelineInTheInboxWindow(t *testing.T) {
	w := newWorld(t)
	w.env = append(w.env, "NUDGE_RETRY_DELAYS=1s,1s,1s")
	w.startDaemon()
	b := startBrowser(t)
	b.open(w.signInLink())
	b.waitLive()

	// A dead turn with markup in its error text; nudge finds no terminal
	// for it, so its one continuation is not delivered and the person is told.
	const dead = "0b5e7c1d-5555-4555-8555-666666666666"
	w.deadTurn(dead, "API Error: 500 "+xss)
	daemontest.Eventually(t, "the entry on the page", 20*time.Second, func() bool {
		es := b.entries()
		return len(es) == 1 && strings.Contains(es[0].What, "nudge could not continue Claude Code")
	})
	b.click(`#entries li.entry[data-session="` + dead + `"] .what`)
	var v timelineView
	daemontest.Eventually(t, "the timeline of the entry's session", 10*time.Second, func() bool {
		v = b.timeline()
		return v.Open && v.Loaded && v.Session == dead && v.has("attempt", "failed", "continuation 1 not delivered")
	})
	told := b.entries()[0].What
	switch {
	case !strings.Contains(v.Who, "now gave up"):
		t.Errorf("the state is not in words:\n%s", v)
	case !v.has("event", "failed", "turn failed: provider error"):
		t.Errorf("no dead turn in words:\n%s", v)
	case !v.has("decision", "", "provider error: attempt 1 of 3 in 1s"):
		t.Errorf("no scheduling decision:\n%s", v)
	case !v.has("attempt", "failed", "continuation 1 not delivered: "+told):
		t.Errorf("the attempt does not say why in the Inbox entry's words (%q):\n%s", told, v)
	case !v.has("decision", "", "told the person why continuation 1 was not delivered"):
		t.Errorf("no decision to tell the person:\n%s", v)
	case v.Todo != told:
		t.Errorf("what to do %q, want the entry's words %q", v.Todo, told)
	}
	quoted := false
	for _, l := range v.Lines {
		quoted = quoted || l.Quote == "API Error: 500 "+xss
	}
	if !quoted {
		t.Errorf("the agent's error text is not shown as it is:\n%s", v)
	}
	var imgs int
	b.run(`return document.querySelectorAll('#timeline img').length`, &imgs)
	if imgs != 0 {
		t.Errorf("transcript text became markup in the timeline: %d img elements", imgs)
	}
	if open, text := b.alertOpen(); open {
		t.Fatalf("the error text ran script: alert %q", text)
	}

	// The person answers in the session; the open timeline follows, and
	// there is nothing left to do.
	daemontest.Claude(t, w.home, "/work/shop", dead, append([]map[string]any{daemontest.ClaudePrompt("carry on")}, daemontest.ClaudeTurnDone()...)...)
	daemontest.Eventually(t, "the finished turn in the open timeline, with nothing to do", 15*time.Second, func() bool {
		v = b.timeline()
		return v.has("event", "ok", "turn finished") && strings.Contains(v.Who, "now finished") && v.Todo == ""
	})
	shots := screenshotDir(t)
	b.screenshot(filepath.Join(shots, "timeline-dead-turn.png"))

	// A usage limit, opened from the sessions list: its reset time, and
	// what to do, in the words of its Inbox entry.
	const limited = "5a1c9e3f-7777-4777-8777-888888888888"
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	limits := map[string]any{"status": "rejected", "resetsAt": reset.Unix(), "rateLimitType": "five_hour", "overageStatus": "rejected"}
	limit := daemontest.ClaudeAPIError("rate_limit", 429, "You've hit your 5-hour limit · resets "+reset.UTC().Format("3:04pm")+" (UTC)")
	limit["apiError"], limit["quotaLimits"], limit["apiErrorParams"] = "usage_limit_reached", limits, map[string]any{"rate_limit_info": limits}
	daemontest.Claude(t, w.home, "/work/shop", limited, daemontest.ClaudePrompt("refactor the cart"), limit)
	daemontest.Eventually(t, "the limited session in the list", 15*time.Second, func() bool {
		var n int
		b.run(`return document.querySelectorAll('#sessions li[data-session="`+limited+`"]').length`, &n)
		return n == 1
	})
	b.click(`#sessions li[data-session="` + limited + `"]`)
	daemontest.Eventually(t, "the limited session's timeline", 10*time.Second, func() bool {
		v = b.timeline()
		return v.Session == limited && v.has("event", "failed", "turn failed: usage limit")
	})
	if !v.has("event", "failed", "resets at "+reset.Local().Format("15:04")) {
		t.Errorf("the limit's reset time is not on its event:\n%s", v)
	}
	if !strings.Contains(v.Who, "now usage limit") || !strings.Contains(v.Todo, "reached its usage limit, which resets at") ||
		!strings.Contains(v.Todo, "type continue in the session after it, or turn on Continue after usage limit") {
		t.Errorf("the usage limit's state and what to do:\n%s", v)
	}
	if !v.has("decision", "", "told the person: "+v.Todo) {
		t.Errorf("the timeline does not tell the limit in the Inbox entry's words:\n%s", v)
	}
	b.screenshot(filepath.Join(shots, "timeline-usage-limit.png"))

	b.click("#timeline-close")
	if v = b.timeline(); v.Open {
		t.Errorf("the timeline stays open after Close")
	}

	// From the keyboard: Enter on a session opens its timeline, and the
	// session keeps the focus while the list is drawn again.
	b.press(`#sessions li[data-session="`+dead+`"]`, "\uE007")
	daemontest.Eventually(t, "the timeline opened from the keyboard", 10*time.Second, func() bool {
		v = b.timeline()
		return v.Open && v.Session == dead && v.has("event", "ok", "turn finished")
	})
	time.Sleep(1500 * time.Millisecond) // the list is drawn again each second
	var focused string
	b.run(`return (document.activeElement && document.activeElement.dataset.session) || ''`, &focused)
	if focused != dead {
		t.Errorf("the focus went from the session to %q", focused)
	}

	// A pause from the CLI shows in the window.
	must(t, func() error { _, err := w.nudge("pause"); return err }())
	daemontest.Eventually(t, "Resume on the page", 10*time.Second, func() bool {
		var label string
		b.run(`return document.getElementById('pause').textContent`, &label)
		return label == "Resume"
	})
}
