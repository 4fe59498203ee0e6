package watch

import (
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"nudge/internal/samples"
	"nudge/internal/watch/opencode"
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
	opts := options(Sources(map[string]string{"opencode": root}))
	opts.FirstRun = true
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

func TestOpenCodeServerAddr(t *testing.T) {
	cases := []struct {
		argv string
		want string
	}{
		{"opencode", ""},
		{"opencode serve", "127.0.0.1:4096"},
		{"/x/node_modules/opencode-linux-x64/bin/opencode serve --hostname 127.0.0.1 --port 4311", "127.0.0.1:4311"},
		{"node /x/bin/opencode --port=5000", "127.0.0.1:5000"},
		{"opencode serve --port 0", ""},
		{"opencode serve --hostname 10.0.0.5", ""},
		{"vim opencode serve", ""},
		{"opencode --port nope", ""},
	}
	for _, c := range cases {
		got, _ := opencode.ServerAddr(strings.Fields(c.argv))
		if got != c.want {
			t.Errorf("ServerAddr(%q) = %q, want %q", c.argv, got, c.want)
		}
	}
}

// TestOpenCodeLiveStream runs a process whose command line reads as
// `opencode serve --port N` and a stand-in for its server's /global/event,
// and checks that its session events arrive as records, that the session's
// database rows are skipped meanwhile, and that the stream ends with the
// process.
func TestOpenCodeLiveStream(t *testing.T) {
	root, db := openCodeRoot(t, "ok")
	tail, err := exec.LookPath("tail")
	if err != nil {
		t.Skip("no tail(1) to stand in for an OpenCode process")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	frames := make(chan string, 10)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/global/event" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"payload\":{\"id\":\"evt_1\",\"type\":\"server.connected\",\"properties\":{}}}\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case f := <-frames:
				fmt.Fprintf(w, "data: %s\n\n", f)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	exe := filepath.Join(t.TempDir(), "opencode")
	if err := os.Symlink(tail, exe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-F", "--", os.DevNull, "serve", "--port", fmt.Sprint(port))
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Dir(root))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })

	opts := options(Sources(map[string]string{"opencode": root}))
	opts.FirstRun = true
	r := startRun(t, opts)
	status := `{"id":"evt_2","type":"session.status","properties":{"sessionID":"ses_live","status":{"type":"busy"}}}`
	frames <- `{"directory":"/p","payload":{"type":"sync","syncEvent":{"id":"evt_3"}}}`
	frames <- `{"directory":"/p","payload":` + status + `}`
	rec := r.records(1)[0]
	want := fmt.Sprintf("opencode-sse://%d@127.0.0.1:%d/ses_live", cmd.Process.Pid, port)
	if rec.Path != want || string(rec.Line) != status || rec.Agent != "opencode" {
		t.Fatalf("live record %s %s %s, want path %s", rec.Agent, rec.Path, rec.Line, want)
	}
	// Rows of the covered session are skipped (an empty record keeps the
	// position); other sessions' rows still come.
	writeEvent(t, db, "evt_covered", "ses_live", "message.updated.1")
	if got := r.records(1)[0]; len(got.Line) != 0 || got.Path != db {
		t.Fatalf("covered row emitted: %s", got.Line)
	}
	cmd.Process.Kill()
	<-exited
	eventually(t, "the stream to end with its process", func() bool {
		return strings.Contains(r.log.String(), "OpenCode process gone")
	})
	n := 0
	eventually(t, "the session's rows to be read again", func() bool {
		n++
		writeEvent(t, db, fmt.Sprintf("evt_uncovered%d", n), "ses_live", "message.updated.1")
		for _, rec := range r.synced(db) {
			if len(rec.Line) > 0 {
				return true
			}
		}
		return false
	})
}
