package classify

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"nudge/internal/watch/opencode"
)

// openCodeRow is one row of OpenCode's durable event log.
type openCodeRow struct {
	typ  string
	data string
}

// openCodeTestDB writes rows into a database made from OpenCode's real
// schema (samples/opencode/opencode-schema.sql), one session, ids dated
// from start a second apart, and returns its path.
func openCodeTestDB(t *testing.T, session string, start time.Time, rows []openCodeRow) string {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join(openCodeSamples, "opencode-schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "opencode.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatalf("schema: %v", err)
	}
	if _, err := db.Exec("INSERT INTO event_sequence (aggregate_id, seq) VALUES (?, ?)", session, len(rows)); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		at := start.Add(time.Duration(i) * time.Second)
		id := fmt.Sprintf("evt_%012x%014d", (at.UnixMilli()%(1<<36))<<12|int64(i), i)
		if !json.Valid([]byte(r.data)) {
			t.Fatalf("row %d is not JSON: %s", i, r.data)
		}
		if _, err := db.Exec("INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, ?, ?)",
			id, session, i, r.typ, r.data); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// openCodeOverflowRows is a context overflow as the database alone tells it
// (docs/agents/opencode.md §4.3): the first step ends with no error and no
// finish, OpenCode adds its compaction message, and the compaction step is
// first written ended without the error, then with ContextOverflowError and
// finish "error".
func openCodeOverflowRows(session string, start time.Time) []openCodeRow {
	ms := func(s int) int64 { return start.Add(time.Duration(s) * time.Second).UnixMilli() }
	msg := func(info string) openCodeRow {
		return openCodeRow{"message.updated.1", `{"sessionID":"` + session + `","info":` + info + `}`}
	}
	part := func(p string) openCodeRow {
		return openCodeRow{"message.part.updated.1", `{"sessionID":"` + session + `","part":` + p + `}`}
	}
	step := func(id string, extra string) string {
		return fmt.Sprintf(`{"id":%q,"sessionID":%q,"role":"assistant","parentID":"msg_user1","mode":"build","path":{"cwd":"/home/dev/project","root":"/home/dev/project"}%s}`, id, session, extra)
	}
	compaction := func(extra string) string {
		return fmt.Sprintf(`{"id":"msg_compact2","sessionID":%q,"role":"assistant","parentID":"msg_compact1","mode":"compaction","agent":"compaction","summary":true,"path":{"cwd":"/home/dev/project","root":"/home/dev/project"}%s}`, session, extra)
	}
	return []openCodeRow{
		{"session.created.1", fmt.Sprintf(`{"sessionID":%q,"info":{"id":%q,"directory":"/home/dev/project","time":{"created":%d,"updated":%d}}}`, session, session, ms(0), ms(0))},
		msg(fmt.Sprintf(`{"id":"msg_user1","sessionID":%q,"role":"user","time":{"created":%d}}`, session, ms(1))),
		part(`{"id":"prt_1","messageID":"msg_user1","type":"text","text":"summarize the whole repository"}`),
		msg(step("msg_step1", fmt.Sprintf(`,"time":{"created":%d}`, ms(3)))),
		part(`{"id":"prt_2","messageID":"msg_step1","type":"step-start"}`),
		msg(step("msg_step1", fmt.Sprintf(`,"time":{"created":%d,"completed":%d}`, ms(3), ms(5)))),
		msg(fmt.Sprintf(`{"id":"msg_compact1","sessionID":%q,"role":"user","time":{"created":%d}}`, session, ms(6))),
		part(`{"id":"prt_3","messageID":"msg_compact1","type":"compaction","auto":true,"overflow":true}`),
		msg(compaction(fmt.Sprintf(`,"time":{"created":%d}`, ms(8)))),
		msg(compaction(fmt.Sprintf(`,"time":{"created":%d,"completed":%d}`, ms(8), ms(9)))),
		msg(compaction(fmt.Sprintf(`,"time":{"created":%d,"completed":%d},"finish":"error","error":{"name":"ContextOverflowError","data":{"message":"Session too large to compact - context exceeds model limit even after stripping media"}}`, ms(8), ms(9)))),
	}
}

// TestOpenCodeDatabaseOverflowRejected: a context overflow read from the
// database alone (a TUI without a port) ends the turn once, rejected, with
// the compaction step's text; nothing reads as cancelled on the way.
func TestOpenCodeDatabaseOverflowRejected(t *testing.T) {
	const session = "ses_overflow0000000000000001"
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	path := openCodeTestDB(t, session, start, openCodeOverflowRows(session, start))
	agent, _ := Lookup(openCodeName)
	events, err := readFile(path, agent)
	if err != nil {
		t.Fatal(err)
	}
	var endings []Event
	for _, e := range events {
		if e.Kind == TurnFailed || e.Kind == TurnDone {
			endings = append(endings, e)
		}
	}
	if len(endings) != 1 {
		t.Fatalf("turn endings = %+v, want exactly one", endings)
	}
	f := endings[0].Failure
	if f == nil || f.Class != Rejected || f.Code != "ContextOverflowError" || f.Message != "Session too large to compact - context exceeds model limit even after stripping media" {
		t.Errorf("ending = %+v, want rejected ContextOverflowError with the compaction step's text", f)
	}
	if want := start.Add(9 * time.Second); !endings[0].Time.Equal(want) || endings[0].Session != session || endings[0].Project != "/home/dev/project" {
		t.Errorf("ending %+v, want session %s at %v in /home/dev/project", endings[0], session, want)
	}

	// The same rows, fed one by one with the database busy between them:
	// the first step's ending waits for what follows instead of being
	// taken for an abort.
	r := newOpenCodeReader(path, nil).(Settler)
	records, err := opencode.AllEvents(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range records {
		for _, e := range append(r.Read(rec), r.Settle(time.Second)...) {
			if e.Kind == TurnFailed && i < len(records)-1 {
				t.Fatalf("record %d: turn ended early: %+v", i, e.Failure)
			}
		}
	}
}

// TestOpenCodeDatabaseAbortSettles: the same first step with nothing after
// it is the abort during OpenCode's retry wait (docs/agents/opencode.md §7):
// cancelled once the database has been quiet, or as soon as the session's
// next record shows something other than a compaction.
func TestOpenCodeDatabaseAbortSettles(t *testing.T) {
	const session = "ses_abort00000000000000001"
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	rows := openCodeOverflowRows(session, start)[:6] // up to the first step's ending
	path := openCodeTestDB(t, session, start, rows)
	r := newOpenCodeReader(path, nil).(Settler)
	records, err := opencode.AllEvents(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range records {
		if ev := lastEnding(r.Read(rec)); ev != nil {
			t.Fatalf("ended before the database went quiet: %+v", ev)
		}
	}
	if ev := r.Settle(openCodeDecideQuiet - time.Second); len(ev) != 0 {
		t.Fatalf("settled while the database was still busy: %+v", ev)
	}
	got := r.Settle(openCodeDecideQuiet)
	if len(got) != 1 || got[0].Kind != TurnFailed || got[0].Failure.Class != Cancelled || !got[0].Time.Equal(start.Add(5*time.Second)) {
		t.Fatalf("settled = %+v, want one cancelled turn at the step's end", got)
	}
	if again := r.Settle(time.Hour); len(again) != 0 {
		t.Errorf("settled twice: %+v", again)
	}

	// A person's next message decides at once.
	r2 := newOpenCodeReader(path, nil)
	for _, rec := range records {
		r2.Read(rec)
	}
	next := []byte(`{"type":"sync","syncEvent":{"id":"evt_x","type":"message.updated.1","data":{"sessionID":"` + session + `","info":{"id":"msg_user2","sessionID":"` + session + `","role":"user","time":{"created":1}}}}}`)
	if ev := r2.Read(next); len(ev) != 0 {
		t.Fatalf("a user message row alone decided: %+v", ev)
	}
	text := []byte(`{"type":"sync","syncEvent":{"id":"evt_y","type":"message.part.updated.1","data":{"sessionID":"` + session + `","part":{"messageID":"msg_user2","type":"text","text":"go on"}}}}`)
	ev := r2.Read(text)
	if len(ev) != 2 || ev[0].Kind != TurnFailed || ev[0].Failure.Class != Cancelled || ev[1].Kind != UserMessage {
		t.Fatalf("events = %+v, want the cancelled turn, then the person's message", ev)
	}
}
