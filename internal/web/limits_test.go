package web

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// closedWithin bounds how long a test waits to see a connection closed;
// the server's own limits are what close it, much sooner.
const closedWithin = 20 * time.Second

// dial opens a raw connection to f's listener.
func (f *fixture) dial() net.Conn {
	f.t.Helper()
	c, err := net.Dial("tcp", f.host())
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

func (f *fixture) host() string {
	return strings.TrimSuffix(strings.TrimPrefix(f.srv.URL(), "http://"), "/")
}

// untilClosed reads what the server sends until it closes c, and fails
// the test if it does not.
func untilClosed(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(closedWithin))
	b, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server kept the connection open; it sent %q", b)
	}
	return string(b)
}

func TestRefusedConnectionsAreClosed(t *testing.T) {
	f := serve(t)
	// A POST without the secret that announces a large body and sends two
	// bytes of it: refused at once, the rest not waited for.
	slow := f.dial()
	io.WriteString(slow, "POST /api/entries/read-all HTTP/1.1\r\nHost: "+f.host()+"\r\nContent-Length: 60000\r\n\r\nab")
	if got := untilClosed(t, slow); !strings.HasPrefix(got, "HTTP/1.1 401") {
		t.Fatalf("slow body: %q", got)
	}
	// A keep-alive connection after a 401 is not kept.
	idle := f.dial()
	io.WriteString(idle, "GET /api/status HTTP/1.1\r\nHost: "+f.host()+"\r\n\r\n")
	if got := untilClosed(t, idle); !strings.HasPrefix(got, "HTTP/1.1 401") || !strings.Contains(got, "Connection: close") {
		t.Fatalf("after a 401: %q", got)
	}
	// A foreign Host, likewise.
	foreign := f.dial()
	io.WriteString(foreign, "GET /api/status HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer "+f.secret+"\r\n\r\n")
	if got := untilClosed(t, foreign); !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Fatalf("foreign host: %q", got)
	}
	// A body over the limit is refused before the secret is looked at.
	big := f.dial()
	io.WriteString(big, "POST /api/settings HTTP/1.1\r\nHost: "+f.host()+"\r\nContent-Length: 1000000\r\n\r\n{")
	if got := untilClosed(t, big); !strings.HasPrefix(got, "HTTP/1.1 413") {
		t.Fatalf("large body: %q", got)
	}
	// A chunked body, which announces no length, is cut at the limit.
	chunked := f.dial()
	body := strings.Repeat(" ", maxBody) + `{"paused":true}`
	fmt.Fprintf(chunked, "POST /api/settings HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", f.host(), f.secret, len(body), body)
	if got := untilClosed(t, chunked); !strings.HasPrefix(got, "HTTP/1.1 400") || !strings.Contains(got, "too large") {
		t.Fatalf("large chunked body: %q", got)
	}
	if f.daemon.Status().Settings.Paused {
		t.Fatal("a settings change over the size limit was applied")
	}
}

func TestSlowAndIdleConnectionsAreDropped(t *testing.T) {
	f := serveLimited(t, limits{readHeader: 200 * time.Millisecond, read: 400 * time.Millisecond, write: 400 * time.Millisecond,
		idle: 400 * time.Millisecond, strangers: 64})
	// A header that never ends.
	header := f.dial()
	io.WriteString(header, "GET /api/status HTTP/1.1\r\nHost: "+f.host()+"\r\n")
	untilClosed(t, header)
	// A body that never ends, with the secret.
	body := f.dial()
	io.WriteString(body, "POST /api/settings HTTP/1.1\r\nHost: "+f.host()+"\r\nAuthorization: Bearer "+f.secret+
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	untilClosed(t, body)
	// A keep-alive connection left idle after an answer.
	idle := f.dial()
	io.WriteString(idle, "GET /api/status HTTP/1.1\r\nHost: "+f.host()+"\r\nAuthorization: Bearer "+f.secret+"\r\n\r\n")
	if got := untilClosed(t, idle); !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Fatalf("idle: %q", got)
	}
}

func TestEventStreamOutlivesTheReadTimeout(t *testing.T) {
	f := serveLimited(t, limits{readHeader: 100 * time.Millisecond, read: 100 * time.Millisecond, write: time.Second,
		idle: 100 * time.Millisecond, strangers: 64})
	resp := f.request("GET", "/api/events", nil, "")
	f.t.Cleanup(func() { resp.Body.Close() })
	lines := bufio.NewScanner(resp.Body)
	next := func(want string) {
		t.Helper()
		for lines.Scan() {
			if strings.Contains(lines.Text(), want) {
				return
			}
		}
		t.Fatalf("the stream ended before %q: %v", want, lines.Err())
	}
	next("event: entries")
	time.Sleep(500 * time.Millisecond) // well past every timeout of the server
	f.seed("after the timeouts")
	next("after the timeouts")
}

// TestStrangersMakeRoomForACredential: two connections without a
// credential fill the room; a third, showing the secret, is answered all
// the same, and the oldest stranger is closed for it. A stranger's page
// file ends its connection.
func TestStrangersMakeRoomForACredential(t *testing.T) {
	f := serveLimited(t, limits{readHeader: time.Minute, read: time.Minute, write: time.Minute, idle: time.Minute, strangers: 2})
	first := f.dial()
	second := f.dial()
	io.WriteString(second, "GET /app.css HTTP/1.1\r\nHost: "+f.host()+"\r\n\r\n")
	if got := untilClosed(t, second); !strings.HasPrefix(got, "HTTP/1.1 200") || !strings.Contains(got, "Connection: close") {
		t.Fatalf("a stranger's page file: %q", got)
	}
	first2 := f.dial() // the room is full again: first and first2
	third := f.dial()
	io.WriteString(third, "GET /api/status HTTP/1.1\r\nHost: "+f.host()+"\r\nAuthorization: Bearer "+f.secret+"\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(third), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("with the secret, over the limit: %v %v", resp, err)
	}
	if got := untilClosed(t, first); got != "" {
		t.Fatalf("the oldest stranger was answered %q", got)
	}
	// The one with the secret no longer counts: a new stranger pushes out
	// first2, not it.
	f.dial()
	f.dial()
	if got := untilClosed(t, first2); got != "" {
		t.Fatalf("the second stranger was answered %q", got)
	}
	io.WriteString(third, "GET /api/status HTTP/1.1\r\nHost: "+f.host()+"\r\nAuthorization: Bearer "+f.secret+"\r\nConnection: close\r\n\r\n")
	if got := untilClosed(t, third); !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Fatalf("the admitted connection after more strangers: %q", got)
	}
}
