package web

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"nudge/internal/inbox"
	"nudge/internal/outage"
	"nudge/internal/retry"
)

// The picture counts each provider's errors per bucket of its range and
// gives the outages that reach into it as bands.
func TestPicture(t *testing.T) {
	f := serve(t)
	now := time.Now().UTC()
	ev := func(ident, provider string, ago time.Duration) inbox.EventRow {
		return inbox.EventRow{Ident: []byte(ident), Agent: "claude", Session: "s", Kind: "turn_failed", Class: "provider_error",
			Provider: provider, Time: now.Add(-ago)}
	}
	start := now.Add(-2 * time.Hour)
	o := outage.Outage{Provider: "anthropic", Start: start, End: start.Add(10 * time.Minute),
		Members: []outage.Member{{Key: retry.Key{Agent: "claude", Session: "a"}}, {Key: retry.Key{Agent: "claude", Session: "b"}, Continued: true}}}
	old := outage.Outage{Provider: "openai", Start: now.Add(-72 * time.Hour), End: now.Add(-71 * time.Hour)}
	blob, _ := json.Marshal(o)
	oldBlob, _ := json.Marshal(old)
	err := f.db.Commit(context.Background(), inbox.Batch{
		Events: []inbox.EventRow{ev("1", "anthropic", 2*time.Hour), ev("2", "anthropic", 2*time.Hour), ev("3", "openai", 0), ev("4", "openai", 30*time.Hour)},
		Outages: []inbox.OutageRow{{Provider: "anthropic", Start: o.Start, End: o.End, Sessions: 2, Outage: blob},
			{Provider: "openai", Start: old.Start, End: old.End, Outage: oldBlob}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var p Picture
	if err := json.Unmarshal([]byte(f.expect(f.request("GET", "/api/picture?range=24h", nil, ""), 200)), &p); err != nil {
		t.Fatal(err)
	}
	if p.Buckets != 24 || p.StepSeconds != 3600 || len(p.Providers) != 2 {
		t.Fatalf("picture %+v", p)
	}
	sum := func(cs []int) (n int) {
		for _, c := range cs {
			n += c
		}
		return n
	}
	if a, o := p.Providers[0], p.Providers[1]; a.Title != "Anthropic" || sum(a.Counts) != 2 || a.Counts[21] != 2 || sum(o.Counts) != 1 || o.Counts[23] != 1 {
		t.Errorf("providers %+v", p.Providers)
	}
	if len(p.Outages) != 1 || p.Outages[0].End == nil || p.Outages[0].Continued != 1 || p.Outages[0].Sessions != 2 {
		t.Errorf("outages %+v", p.Outages)
	}
	if err := json.Unmarshal([]byte(f.expect(f.request("GET", "/api/picture?range=7d", nil, ""), 200)), &p); err != nil || p.Buckets != 28 || len(p.Outages) != 2 {
		t.Errorf("7 days: %v %+v", err, p)
	}
	f.expect(f.request("GET", "/api/picture?range=1y", nil, ""), 400)
	f.expect(f.request("GET", "/api/picture", map[string]string{"Authorization": ""}, ""), 401)
}

// POST /api/continue asks the daemon to continue the waiting sessions, of
// one provider or of all; it is a change like the others: JSON only.
func TestContinueFromTheWindow(t *testing.T) {
	f := serve(t)
	asJSON := map[string]string{"Content-Type": "application/json"}
	if got := f.expect(f.request("POST", "/api/continue", asJSON, `{"provider":"anthropic"}`), 200); got != `{"provider":"anthropic","continued":2}`+"\n" {
		t.Errorf("answer %q", got)
	}
	f.expect(f.request("POST", "/api/continue", asJSON, `{}`), 200)
	f.expect(f.request("POST", "/api/continue", nil, `{}`), http.StatusUnsupportedMediaType)
	f.expect(f.request("POST", "/api/continue", asJSON, `{"every":true}`), http.StatusBadRequest)
	f.daemon.mu.Lock()
	defer f.daemon.mu.Unlock()
	if !slices.Equal(f.daemon.continued, []string{"anthropic", ""}) {
		t.Errorf("asked for %q", f.daemon.continued)
	}
}
