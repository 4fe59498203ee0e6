package daemon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"testing"
	"time"

	"nudge/internal/classify"
	"nudge/internal/watch"
)

// records is a reader that gives the same events for every record.
type records []classify.Event

func (r records) Read([]byte) []classify.Event { return r }

// Events of one kind from one record are told apart by their place among
// that kind; the same record read again gives the same identities
// (docs/durability.md).
func TestEventIdentityByPlaceInItsRecord(t *testing.T) {
	const path = "/s.jsonl"
	ev := func(k classify.Kind) classify.Event {
		return classify.Event{Agent: "claude", Session: "s", Kind: k}
	}
	d := &Daemon{log: slog.New(slog.DiscardHandler),
		files: map[string]*fileReader{path: {reader: records{ev(classify.AgentActivity), ev(classify.UserMessage), ev(classify.AgentActivity), ev(classify.AgentActivity)}}}}
	rec := watch.Record{Agent: "claude", Path: path, Line: []byte(`{"type":"assistant"}`)}
	first := d.classifyRecord(nil, rec, time.Now())
	again := d.classifyRecord(nil, rec, time.Now())
	if len(first) != 4 || len(again) != 4 {
		t.Fatalf("got %d and %d events, want 4", len(first), len(again))
	}
	// The place is among events of the same kind: without the user
	// message in between, the activities keep their identities.
	d.files[path].reader = records{ev(classify.AgentActivity), ev(classify.AgentActivity), ev(classify.AgentActivity)}
	for i, f := range d.classifyRecord(nil, rec, time.Now()) {
		if was := first[[]int{0, 2, 3}[i]]; !bytes.Equal(f.ident, was.ident) {
			t.Errorf("activity %d: identity %x without the user message, %x with it", i, f.ident, was.ident)
		}
	}
	for i := range first {
		if !bytes.Equal(first[i].ident, again[i].ident) {
			t.Errorf("event %d: identity %x, then %x for the same record", i, first[i].ident, again[i].ident)
		}
		for j := range i {
			if bytes.Equal(first[i].ident, first[j].ident) {
				t.Errorf("events %d and %d of one record share the identity %x", j, i, first[i].ident)
			}
		}
	}
}

// TestEventIdentityIsStable: the identities stored by earlier versions are
// those given now, or an upgrade would store every event again. The
// expected values are SHA-256 of the bytes docs/durability.md §3 lists,
// computed apart from this code.
func TestEventIdentityIsStable(t *testing.T) {
	recordSum := sha256.Sum256([]byte("line\x00{}"))
	for _, c := range []struct {
		ev      classify.Event
		ordinal int
		record  []byte
		want    string
	}{
		{classify.Event{Agent: "claude", Session: "11111111-1111-4111-8111-111111111111", Kind: classify.TurnFailed, ID: "0c2b7e1a-5a38-4f55-9a5e-1f3d2c4b5a69"},
			1, nil, "9e4b2be432fd6d121869856cf53594ad"},
		{classify.Event{Agent: "codex", Session: "s", Kind: classify.TurnStarted}, 0, recordSum[:], "99617e86c0a81f1d778b9dfc6c8fdf06"},
	} {
		if got := hex.EncodeToString(eventIdent(c.ev, c.ordinal, c.record)); got != c.want {
			t.Errorf("%s %s %s: identity %s, stored before as %s", c.ev.Agent, c.ev.Session, c.ev.Kind, got, c.want)
		}
	}
}
