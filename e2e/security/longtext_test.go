package security

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nudge/internal/dbustest"
)

// TestLongErrorTextIsToldInPart: an error text that is a whole page (a
// proxy's HTML, or megabytes from a hostile record) reaches the
// notification and the log as an excerpt; the Inbox entry keeps all of it.
func TestLongErrorTextIsToldInPart(t *testing.T) {
	addr := dbustest.StartBus(t)
	rec := dbustest.Record(t, addr)
	w := newWorld(t, "NUDGE_NOTIFY_DESKTOP=true", "DBUS_SESSION_BUS_ADDRESS="+addr)
	w.start()
	const head = "API Error: 401 <!DOCTYPE html><html><head><title>401 Unauthorized</title>"
	page := head + strings.Repeat("<p>proxy says no</p>", 50_000) // 1 MB
	w.signInFailure("6f2d0b4c-9999-4999-8999-888888888888", "/work/shop", page)

	n := rec.Next(t)
	if len(n.Body) > 2000 || !strings.Contains(n.Body, "API Error: 401") {
		t.Errorf("notification body of %d bytes, want the error's start within 2000: %.200q…", len(n.Body), n.Body)
	}
	es := w.entries()
	if len(es) != 1 || es[0].ErrorText != page {
		t.Fatalf("Inbox: %d entries; want one with the whole error text", len(es))
	}
	f, err := os.Open(filepath.Join(w.data, "nudge.log")) // NUDGE_DATA_DIR holds the log too
	must(t, err)
	defer f.Close()
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 4<<20)
	seen := false
	for lines.Scan() {
		l := lines.Text()
		if strings.Contains(l, "API Error: 401") {
			seen = true
			if len(l) > 4000 {
				t.Errorf("log line of %d bytes: %.200s…", len(l), l)
			}
		}
	}
	must(t, lines.Err())
	if !seen {
		t.Error("the log does not name the error")
	}
}
