package inbox

import (
	"path/filepath"
	"testing"
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
