package security

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/testenv"
)

// closedWithin bounds the wait for the daemon to close a connection; its
// own limits close them much sooner.
const closedWithin = 60 * time.Second

// TestSlowAndIdleClientsAreDropped: many connections without the secret —
// POSTs that announce a large body and send two bytes, keep-alives left
// idle after a 401, headers that never end — are all closed by the daemon,
// its open descriptors go back down, and it still serves the person.
func TestSlowAndIdleClientsAreDropped(t *testing.T) {
	w := newWorld(t)
	d := w.start()
	page := w.pageAddress()
	host := strings.TrimSuffix(strings.TrimPrefix(page, "http://"), "/")
	before := openFiles(t, d.Cmd.Process.Pid)

	kinds := map[string]struct {
		n    int
		send string
	}{
		"slow body":      {300, "POST /api/entries/clear HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 200000\r\n\r\nab"},
		"idle after 401": {100, "GET /api/status HTTP/1.1\r\nHost: " + host + "\r\n\r\n"},
		"endless header": {50, "GET /api/status HTTP/1.1\r\nHost: " + host + "\r\n"},
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := map[string]int{}
	for name, k := range kinds {
		for range k.n {
			c, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			defer c.Close()
			io.WriteString(c, k.send)
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.SetReadDeadline(time.Now().Add(closedWithin))
				_, err := io.Copy(io.Discard, c)
				if errors.Is(err, os.ErrDeadlineExceeded) {
					mu.Lock()
					open[name]++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	for name, n := range open {
		t.Errorf("%d of %d %q connections still open after %s", n, kinds[name].n, name, closedWithin)
	}
	daemontest.Eventually(t, "the daemon's descriptors back down", 20*time.Second, func() bool {
		return openFiles(t, d.Cmd.Process.Pid) <= before+5
	})
	// The person is still served.
	req, err := http.NewRequest("GET", page+"api/entries", nil)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+w.secret())
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("after the flood: %s", resp.Status)
	}
}

// openFiles counts the descriptors process pid holds.
func openFiles(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		testenv.Missing(t, "no /proc to count descriptors: "+err.Error())
	}
	return len(fds)
}
