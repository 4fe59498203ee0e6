package browser

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/inbox"
	"nudge/internal/outage"
	"nudge/internal/retry"
)

// pictureRow is what the page draws for one provider.
type pictureRow struct {
	Provider string `json:"provider"`
	Words    string `json:"words"`
	Bars     int    `json:"bars"`
	Bands    int    `json:"bands"`
}

const readPicture = `return Array.from(document.querySelectorAll('#picture .picture-row')).map(r => ({
	provider: r.dataset.provider, words: r.querySelector('.picture-title').textContent,
	bars: r.querySelectorAll('rect.bar').length, bands: r.querySelectorAll('rect.band').length}));`

// The Inbox window draws each provider's errors over the last 24 hours and
// 7 days, with its outages as bands, from the store.
func TestInboxPicture(t *testing.T) {
	w := newWorld(t)
	now := time.Now().UTC()
	start := now.Add(-3 * time.Hour)
	o := outage.Outage{Provider: "anthropic", Start: start, End: start.Add(20 * time.Minute), Errors: []string{"API Error: 529 Overloaded"},
		Members: []outage.Member{{Key: retry.Key{Agent: "claude", Session: "a"}, Continued: true}, {Key: retry.Key{Agent: "claude", Session: "b"}, Continued: true}}}
	blob, _ := json.Marshal(o)
	var events []inbox.EventRow
	for i, ago := range []time.Duration{3 * time.Hour, 3*time.Hour - time.Minute, 170 * time.Minute, 30 * time.Minute, 4 * 24 * time.Hour} {
		events = append(events, inbox.EventRow{Ident: []byte{byte(i)}, Agent: "claude", Session: "a", Kind: "turn_failed",
			Class: "provider_error", Provider: "anthropic", Time: now.Add(-ago), Message: "API Error: 529 Overloaded"})
	}
	events = append(events, inbox.EventRow{Ident: []byte{9}, Agent: "codex", Session: "c", Kind: "turn_failed",
		Class: "provider_error", Provider: "<b>openai</b>", Time: now.Add(-time.Hour)})
	db, err := inbox.Open(filepath.Join(w.data, "nudge.db"))
	must(t, err)
	must(t, db.Commit(context.Background(), inbox.Batch{Events: events,
		Outages: []inbox.OutageRow{{Provider: o.Provider, Start: o.Start, End: o.End, Sessions: 2, Outage: blob}}}))
	db.Close()
	w.startDaemon()
	b := startBrowser(t)
	b.open(w.signInLink())
	b.waitLive()

	var rows []pictureRow
	daemontest.Eventually(t, "the picture drawn", 10*time.Second, func() bool {
		b.run(readPicture, &rows)
		return len(rows) == 2
	})
	byName := map[string]pictureRow{}
	for _, r := range rows {
		byName[r.Provider] = r
	}
	a, x := byName["Anthropic"], byName["<b>openai</b>"]
	// The last 24 hours: the outage's three errors in one or two hours,
	// one more half an hour ago; the one four days ago is not in them.
	if !strings.HasPrefix(a.Words, "Anthropic · 4 errors · 1 outage, 2 sessions continued after") || a.Bands != 1 || a.Bars < 2 || a.Bars > 3 {
		t.Errorf("Anthropic in the last 24 hours: %+v", a)
	}
	if x.Words != "<b>openai</b> · 1 error" || x.Bars != 1 || x.Bands != 0 {
		t.Errorf("a provider named in markup: %+v", x)
	}
	var bolds int
	b.run(`return document.querySelectorAll('#picture b').length`, &bolds)
	if bolds != 0 {
		t.Error("a provider's name became markup")
	}
	b.screenshot(filepath.Join(screenshotDir(t), "picture.png"))

	b.click("#range-7d")
	daemontest.Eventually(t, "the 7 days drawn", 10*time.Second, func() bool {
		b.run(readPicture, &rows)
		return len(rows) == 2 && strings.Contains(rows[0].Words+"|"+rows[1].Words, "Anthropic · 5 errors")
	})
}

// An outage is one entry in the Inbox window with its sessions' entries
// under it; the other entries stay where they are.
func TestInboxOutageEntry(t *testing.T) {
	w := newWorld(t)
	const key = "anthropic 2026-12-04T10:42:00Z"
	now := time.Now()
	w.seed(inbox.EntryRow{Time: now.Add(-3 * time.Minute), Agent: "claude", Session: "0b5e7c1d-1111-4111-8111-222222222222", Project: "/work/shop",
		What: "gave up after 3 attempts", ErrorText: "API Error: 529", Class: "provider_error", Attempts: 3, Outage: key})
	w.seed(inbox.EntryRow{Time: now.Add(-2 * time.Minute), Agent: "claude", Session: "7d1f0a3b-3333-4333-8333-444444444444", Project: "/work/web",
		What: "needs you to sign in", Class: "auth"})
	w.seed(inbox.EntryRow{Time: now.Add(-time.Minute), What: "Anthropic is back; 4 sessions continued", ErrorText: "API Error: 529",
		Class: "provider_error", Provider: "anthropic", Outage: key})
	w.startDaemon()
	b := startBrowser(t)
	b.open(w.signInLink())
	b.waitLive()
	var got struct {
		Top   []string `json:"top"`
		Under []string `json:"under"`
	}
	daemontest.Eventually(t, "the entries drawn", 10*time.Second, func() bool {
		b.run(`return {top: Array.from(document.querySelectorAll('#entries > li.entry')).map(li => li.querySelector('.what').textContent),
			under: Array.from(document.querySelectorAll('#entries > li.outage-entry .under > li.entry')).map(li => li.querySelector('.what').textContent)}`, &got)
		return len(got.Top) > 0
	})
	if len(got.Top) != 2 || got.Top[0] != "Anthropic is back; 4 sessions continued" || got.Top[1] != "needs you to sign in" ||
		len(got.Under) != 1 || got.Under[0] != "gave up after 3 attempts" {
		t.Errorf("entries on the page: %+v", got)
	}
	b.screenshot(filepath.Join(screenshotDir(t), "outage-entry.png"))
}
