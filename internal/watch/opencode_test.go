package watch

import (
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"nudge/internal/classify"
	"nudge/internal/samples"
	"nudge/internal/testenv"
	"nudge/internal/watch/opencode/opencodetest"
)

// openCodeRoot copies a sample database into a fresh data folder and
// returns the OpenCode root (…/opencode) and the database path.
func openCodeRoot(t *testing.T, sample string) (string, string) {
	t.Helper()
	data, err := os.ReadFile(samples.Dir("opencode", sample+".opencode.db"))
	if err != nil {
		t.Fatalf("sample %s: %v", sample, err)
	}
	root := filepath.Join(t.TempDir(), "data", "opencode")
	mkdir(t, root)
	db := filepath.Join(root, "opencode.db")
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return root, db
}

// writeEvent adds an event row as OpenCode would, through its own connection.
func writeEvent(t *testing.T, path, id, session, typ string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(2000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(`INSERT INTO event (id, aggregate_id, seq, type, data)
		VALUES (?, ?, (SELECT coalesce(max(seq),0)+1 FROM event WHERE aggregate_id = ?), ?, ?)`,
		id, session, session, typ, `{"sessionID":"`+session+`"}`)
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenCodeDatabaseRows(t *testing.T) {
	root, db := openCodeRoot(t, "e429_free_tier")
	r := startRun(t, options(Sources(map[string]string{"opencode": root})))
	recs := r.records(9)
	for i, rec := range recs {
		if rec.Path != db || rec.End != int64(i+1) || !strings.HasPrefix(string(rec.Line), `{"type":"sync","syncEvent":{"id":"evt_`) {
			t.Fatalf("record %d: %s@%d %s", i, rec.Path, rec.End, rec.Line)
		}
	}
	if !strings.Contains(string(recs[0].Line), `"type":"session.created.1"`) {
		t.Errorf("first row is not the session's creation: %s", recs[0].Line)
	}
	// A new commit lands in the -wal file; its folder event reads it.
	writeEvent(t, db, "evt_new1", "ses_dd449a5a8ffeXcN89FUgIzu4Iy", "message.updated.1")
	got := r.records(1)
	if got[0].End != 10 || !strings.Contains(string(got[0].Line), `"id":"evt_new1"`) {
		t.Fatalf("new row: %s@%d %s", got[0].Path, got[0].End, got[0].Line)
	}
	r.stop()

	// A restart resumes after the stored position.
	writeEvent(t, db, "evt_new2", "ses_x", "message.updated.1")
	opts := options(Sources(map[string]string{"opencode": root}))
	opts.Positions = map[string]Position{db: {Path: db, File: got[0].File, Offset: got[0].End}}
	r2 := startRun(t, opts)
	if rec := r2.records(1)[0]; !strings.Contains(string(rec.Line), `"id":"evt_new2"`) || rec.End != 11 {
		t.Fatalf("after restart: %s@%d", rec.Line, rec.End)
	}
	if recs := r2.synced(db); len(recs) != 0 {
		t.Fatalf("rows read again after the restart: %s", describe(recs))
	}
}

func TestOpenCodeDatabaseFirstRunSkipsHistory(t *testing.T) {
	root, db := openCodeRoot(t, "ok")
	opts := options(firstLook(Sources(map[string]string{"opencode": root})))
	r := startRun(t, opts)
	if recs := r.synced(db); len(recs) != 0 {
		t.Fatalf("old history read on a first run: %s", describe(recs))
	}
	writeEvent(t, db, "evt_after", "ses_y", "message.updated.1")
	if rec := r.records(1)[0]; !strings.Contains(string(rec.Line), `"evt_after"`) {
		t.Fatalf("got %s", rec.Line)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(db + suffix); err == nil && suffix == "" && fi.Size() == 0 {
			t.Errorf("database emptied")
		}
	}
}

// liveOpenCode is a stand-in OpenCode server whose /global/event sends
// the frames a test puts in frames, and records the credentials of each
// stream request.
type liveOpenCode struct {
	*opencodetest.Server
	frames chan string
	mu     sync.Mutex
	auth   []string
}

func (l *liveOpenCode) creds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.auth)
}

// startLiveOpenCode runs a stand-in with env and args (opencodetest.Start).
func startLiveOpenCode(t *testing.T, env []string, args ...string) *liveOpenCode {
	t.Helper()
	l := &liveOpenCode{frames: make(chan string, 10)}
	l.Server = opencodetest.Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/global/event" {
			http.NotFound(w, r)
			return
		}
		user, pass, _ := r.BasicAuth()
		l.mu.Lock()
		l.auth = append(l.auth, user+":"+pass)
		l.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"payload\":{\"id\":\"evt_1\",\"type\":\"server.connected\",\"properties\":{}}}\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case f := <-l.frames:
				fmt.Fprintf(w, "data: %s\n\n", f)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}), env, args...)
	return l
}

// sampleSession is the session of the "ok" sample database, in its folder.
const (
	sampleSession = "ses_dd44a27b2ffeJB7OXPK95HKcGs"
	sampleFolder  = "/home/dev/project"
)

// liveStatus is a stream frame of a session's status, in a folder.
func liveStatus(folder, session, status string) (frame, payload string) {
	payload = `{"id":"evt_2","type":"session.status","properties":{"sessionID":"` + session + `","status":{"type":"` + status + `"}}}`
	return `{"directory":"` + folder + `","payload":` + payload + `}`, payload
}

// addSession adds a session row to the database, as OpenCode does when a
// session is created.
func addSession(t *testing.T, path, id, folder string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(2000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
		SELECT ?, project_id, 'x', ?, 'x', version, 1, 1 FROM session LIMIT 1`, id, folder)
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenCodeLiveStream: a server started with --port 0 and a password is
// found from its own socket and environment once the database changes;
// its events of a session the database holds arrive as records, that
// session's rows are skipped meanwhile, and the stream ends with the
// process.
func TestOpenCodeLiveStream(t *testing.T) {
	testenv.Slow(t)
	root, db := openCodeRoot(t, "ok")
	opts := options(firstLook(Sources(map[string]string{"opencode": root})))
	r := startRun(t, opts)
	searches := func() int { return strings.Count(r.log.String(), "looking for OpenCode servers") }
	eventually(t, "the search the first read of the database asks for", func() bool { return searches() == 1 })

	oc := startLiveOpenCode(t, []string{"XDG_DATA_HOME=" + filepath.Dir(root), "OPENCODE_SERVER_PASSWORD=pw"}, "serve", "--port", "0")
	// Nothing changed: the process table is not read again.
	time.Sleep(liveSettle + liveGap)
	if n := searches(); n != 1 || strings.Contains(r.log.String(), "following OpenCode") {
		t.Fatalf("the process table was searched %d times with nothing changed", n)
	}
	writeEvent(t, db, "evt_wake", "ses_other", "message.updated.1")
	if rec := r.records(1)[0]; !strings.Contains(string(rec.Line), "evt_wake") {
		t.Fatalf("got %s", rec.Line)
	}
	eventually(t, "the server to be followed", func() bool { return strings.Contains(r.log.String(), "following OpenCode event stream") })
	eventually(t, "the stream to be opened", func() bool { return len(oc.creds()) > 0 })
	if got := oc.creds(); got[0] != "opencode:pw" {
		t.Errorf("stream asked with %q, want the server's own password", got)
	}

	frame, status := liveStatus(sampleFolder, sampleSession, "busy")
	oc.frames <- `{"directory":"/p","payload":{"type":"sync","syncEvent":{"id":"evt_3"}}}`
	oc.frames <- frame
	rec := r.records(1)[0]
	want := fmt.Sprintf("opencode-sse://%d@%s/%s", oc.Cmd.Process.Pid, oc.Addr, sampleSession)
	if rec.Path != want || string(rec.Line) != status || rec.Agent != "opencode" {
		t.Fatalf("live record %s %s %s, want path %s", rec.Agent, rec.Path, rec.Line, want)
	}
	// Rows of the covered session are skipped (a checkpoint keeps the
	// position); other sessions' rows still come.
	before := len(r.checkpoints)
	writeEvent(t, db, "evt_covered", sampleSession, "message.updated.1")
	if got := r.synced(db); len(got) != 0 {
		t.Fatalf("covered row emitted: %s", describe(got))
	}
	if len(r.checkpoints) == before || r.checkpoints[len(r.checkpoints)-1].Path != db {
		t.Fatalf("no checkpoint past the covered row: %s", describe(r.checkpoints))
	}
	oc.Cmd.Process.Kill()
	<-oc.Exited
	eventually(t, "the stream to end with its process", func() bool {
		return strings.Contains(r.log.String(), "OpenCode process gone")
	})
	readAgain(t, r, db, sampleSession)
}

// readAgain checks that the database rows of session are read again.
func readAgain(t *testing.T, r *run, db, session string) {
	t.Helper()
	n := 0
	eventually(t, "the session's rows to be read again", func() bool {
		n++
		writeEvent(t, db, fmt.Sprintf("evt_again%d", n), session, "message.updated.1")
		for _, rec := range r.synced(db) {
			if len(rec.Line) > 0 && strings.Contains(string(rec.Line), session) {
				return true
			}
		}
		return false
	})
}

// TestOpenCodeLiveStreamTrustsOnlyTheDatabase: a stream's events of a
// session the database does not hold are dropped until it does; a stream
// that names another folder for a session is not used for it.
func TestOpenCodeLiveStreamTrustsOnlyTheDatabase(t *testing.T) {
	testenv.Slow(t)
	root, db := openCodeRoot(t, "ok")
	opts := options(firstLook(Sources(map[string]string{"opencode": root})))
	oc := startLiveOpenCode(t, []string{"XDG_DATA_HOME=" + filepath.Dir(root)})
	r := startRun(t, opts)
	eventually(t, "the server to be followed", func() bool { return len(oc.creds()) > 0 })

	const madeUp = "ses_dd44a27b2ffeMADEUPsession1"
	frame, _ := liveStatus("/tmp/elsewhere", madeUp, "idle")
	oc.frames <- frame
	if recs := r.synced(db); len(recs) != 0 {
		t.Fatalf("a session the database does not hold: %s", describe(recs))
	}
	time.Sleep(liveRecheck)
	addSession(t, db, madeUp, "/tmp/elsewhere")
	r.synced(db) // the row's change
	eventually(t, "the session's event once the database holds it", func() bool {
		oc.frames <- frame
		for _, rec := range r.synced(db) {
			if _, _, session, live := classify.OpenCodeLiveTarget(rec.Path); live && session == madeUp {
				return true
			}
		}
		time.Sleep(liveRecheck / 4)
		return false
	})

	// Confirmed and covered, then the stream names another folder: the
	// stream is not used for the session any more; its rows come again.
	frame, _ = liveStatus(sampleFolder, sampleSession, "busy")
	oc.frames <- frame
	for rec := r.records(1)[0]; !strings.HasSuffix(rec.Path, "/"+sampleSession); rec = r.records(1)[0] {
		if !strings.HasSuffix(rec.Path, "/"+madeUp) {
			t.Fatalf("got %s", rec.Path)
		}
	}
	frame, _ = liveStatus("/tmp/attacker", sampleSession, "idle")
	oc.frames <- frame
	eventually(t, "the folder mismatch to be seen", func() bool {
		return strings.Contains(r.log.String(), "names another folder than the database")
	})
	readAgain(t, r, db, sampleSession)
	frame, _ = liveStatus(sampleFolder, sampleSession, "idle")
	oc.frames <- frame
	for _, rec := range r.synced(db) {
		if _, _, session, live := classify.OpenCodeLiveTarget(rec.Path); live && session == sampleSession {
			t.Errorf("stream used for the session after it named another folder: %s", rec.Line)
		}
	}
}

// A server that writes another database than the watched one is not
// followed.
func TestOpenCodeLiveStreamOtherDatabase(t *testing.T) {
	root, _ := openCodeRoot(t, "ok")
	oc := startLiveOpenCode(t, []string{"XDG_DATA_HOME=" + t.TempDir()})
	r := startRun(t, options(Sources(map[string]string{"opencode": root})))
	eventually(t, "the refusal to be logged", func() bool {
		return strings.Contains(r.log.String(), "OpenCode process not followed")
	})
	if got := oc.creds(); len(got) != 0 {
		t.Errorf("the stream of a server of another database was opened: %q", got)
	}
}

// OpenCode's log changing is a sign that a process started: the process
// table is searched, while the log itself is never read as records.
func TestOpenCodeLogWakesTheSearch(t *testing.T) {
	testenv.Slow(t)
	root, db := openCodeRoot(t, "ok")
	mkdir(t, filepath.Join(root, "log"))
	r := startRun(t, options(Sources(map[string]string{"opencode": root})))
	searches := func() int { return strings.Count(r.log.String(), "looking for OpenCode servers") }
	eventually(t, "the first search", func() bool { return searches() == 1 })
	appendTo(t, filepath.Join(root, "log", "opencode.log"), "timestamp=2026-12-01T14:40:14 level=INFO message=started\n")
	eventually(t, "a search after the log changed", func() bool { return searches() == 2 })
	for _, rec := range r.synced(db) {
		if strings.Contains(rec.Path, "opencode.log") {
			t.Errorf("the log was read as records: %s", rec.Line)
		}
	}
	if st := r.w.Stats(); st.FilesWatched != 1 {
		t.Errorf("files watched: %d, want the database alone", st.FilesWatched)
	}
}

// A commit is seen by readers a moment after its bytes land in OpenCode's
// WAL, so a read on the change's event can miss it with no event to
// follow: a database that changed is read once more shortly after. Here
// no event comes at all (scans only, an hour apart): the database's stamp
// changes, a read finds nothing new, then a row is committed unseen, and
// the second look alone reads it (a second later here, so that the commit
// surely lands before it).
func TestOpenCodeDatabaseLookedAtOnceMoreAfterAChange(t *testing.T) {
	settle := databaseSettle
	databaseSettle = time.Second
	t.Cleanup(func() { databaseSettle = settle })
	root, db := openCodeRoot(t, "e429_free_tier")
	opts := options(Sources(map[string]string{"opencode": root}))
	opts.Events = EventsScan
	r := startRun(t, opts)
	r.records(9)
	r.synced(db) // settled: the start's second look is done
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(db, later, later); err != nil {
		t.Fatal(err)
	}
	if recs := r.synced(db); len(recs) != 0 {
		t.Fatalf("records with no new row: %s", describe(recs))
	}
	writeEvent(t, db, "evt_unseen", "ses_dd449a5a8ffeXcN89FUgIzu4Iy", "message.updated.1")
	if got := r.records(1); !strings.Contains(string(got[0].Line), `"id":"evt_unseen"`) {
		t.Fatalf("second look: %s", got[0].Line)
	}
}
