package usersock

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestListenIsUserOnlyAndServes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode()&os.ModeSocket == 0 || info.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v, %v: want a 0600 socket in place of the stale file", info.Mode(), err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") }),
		ReadHeaderTimeout: time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	resp, err := Client(path, 5*time.Second).Get("http://socket/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "hello" {
		t.Fatalf("answer %q", body)
	}
}

// A client that sees the socket file can connect at once, and the file is
// user-only from its first moment: it appears only when it is ready.
// A data folder so deep that a socket's path cannot fit is named, with
// what to do, rather than refused by the system as an "invalid argument".
func TestTooLongPathSaysWhatToDo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "nudge.sock")
	_, err := Listen(path, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "NUDGE_DATA_DIR") {
		t.Fatalf("Listen(%d bytes) = %v; want an error naming the socket and what to do", len(path), err)
	}
}

func TestSocketAppearsReady(t *testing.T) {
	dir := t.TempDir()
	for i := range 200 {
		path := filepath.Join(dir, fmt.Sprintf("s%d.sock", i))
		seen := make(chan error, 1)
		go func() {
			for {
				fi, err := os.Stat(path)
				if err != nil {
					continue
				}
				if fi.Mode().Perm() != 0o600 {
					seen <- fmt.Errorf("mode %v when it appeared", fi.Mode().Perm())
					return
				}
				c, err := net.Dial("unix", path)
				if err == nil {
					c.Close()
				}
				seen <- err
				return
			}
		}()
		ln, err := Listen(path, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if err := <-seen; err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		ln.Close()
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("socket file left after Close: %v", err)
		}
	}
}

// A socket that cannot be put in place is no socket: Listen fails and
// leaves nothing behind under its name in the making.
func TestSocketNotPutInPlaceFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	if err := os.MkdirAll(filepath.Join(path, "held"), 0o700); err != nil { // a folder that is not empty: no rename onto it
		t.Fatal(err)
	}
	ln, err := Listen(path, slog.New(slog.DiscardHandler))
	if err == nil {
		ln.Close()
		t.Fatal("Listen succeeded though its socket could not be renamed into place")
	}
	left, _ := filepath.Glob(filepath.Join(dir, "~*"))
	if len(left) != 0 {
		t.Fatalf("left behind %v", left)
	}
}
