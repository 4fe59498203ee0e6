package inbox

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// An outage is stored with the step that changed it, replaced by its later
// rows, and read back after the database is opened again.
func TestOutagesStoredAndReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	first := OutageRow{Provider: "anthropic", Start: at(1), Sessions: 2, Outage: []byte(`{"n":1}`)}
	other := OutageRow{Provider: "openai", Start: at(2), Sessions: 2, Outage: []byte(`{}`)}
	if err := db.Commit(ctx, Batch{Outages: []OutageRow{first, other}}); err != nil {
		t.Fatal(err)
	}
	first.End, first.Sessions, first.Outage = at(30), 3, []byte(`{"n":2}`)
	if err := db.Commit(ctx, Batch{Outages: []OutageRow{first}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, path)
	all, err := db.Outages(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Provider != "openai" || all[1].Sessions != 3 || !all[1].End.Equal(at(30)) || string(all[1].Outage) != `{"n":2}` {
		t.Fatalf("outages %+v", all)
	}
	lasting, err := db.Outages(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(lasting) != 1 || lasting[0].Provider != "openai" || !lasting[0].End.IsZero() {
		t.Fatalf("open outages %+v", lasting)
	}
}

// Provider errors are counted per provider and bucket from a time on;
// other classes, other kinds and errors naming no provider are not.
func TestProviderErrors(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))
	ev := func(ident, provider, class string, sec int) EventRow {
		return EventRow{Ident: []byte(ident), Agent: "claude", Session: "s", Kind: "turn_failed", Class: class, Provider: provider, Time: at(sec)}
	}
	err := db.Commit(ctx, Batch{Events: []EventRow{
		ev("1", "anthropic", "provider_error", 0), ev("2", "anthropic", "provider_error", 5), ev("3", "anthropic", "provider_error", 15),
		ev("4", "openai", "provider_error", 12), ev("5", "anthropic", "auth", 1), ev("6", "", "provider_error", 1),
		{Ident: []byte("7"), Agent: "claude", Session: "s", Kind: "turn_done", Class: "provider_error", Provider: "anthropic", Time: at(2)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.ProviderErrors(ctx, at(0), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []ErrorCount{{"anthropic", 0, 2}, {"anthropic", 1, 1}, {"openai", 1, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	if got, _ := db.ProviderErrors(ctx, at(10), 10*time.Second); len(got) != 2 {
		t.Errorf("from 10 s: %+v", got)
	}
}

// An outage's own entry (no session) is replaced by its later one; its
// sessions' entries stay, each naming the outage.
func TestOutageEntryReplaced(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))
	const key = "anthropic 2026-12-04T10:42:00Z"
	for _, b := range []Batch{
		{Entries: []EntryRow{{Time: at(1), What: "Anthropic failing", Outage: key}, {Time: at(1), Agent: "claude", Session: "a", What: "gave up", Outage: key}}},
		{Entries: []EntryRow{{Time: at(2), What: "Anthropic is back", Outage: key}, {Time: at(2), Agent: "claude", Session: "b", What: "sign in"}}},
	} {
		if err := db.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	es, err := db.Entries(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Session+":"+e.What+":"+e.Outage)
	}
	if want := []string{"b:sign in:", ":Anthropic is back:" + key, "a:gave up:" + key}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
}
