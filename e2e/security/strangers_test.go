package security

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/e2e/otheruser"
)

// floodCmd is the package of the stranger that floods the page's port.
const floodCmd = "nudge/e2e/security/flood"

// TestStrangersCannotShutTheInboxWindow: another local user holds 64
// keep-alive connections to the page's port that fetch the page every
// 20 s, and 64 that send nothing, each dialled again at once when closed.
// All the while the person's own requests with the secret, and a sign-in
// link's page load and sign-in, are answered; and no connection of the
// stranger's stays open long, whatever it asks. The same holds when the
// flood comes from a program of the person's own (as a web page in their
// browser would), whose connections nudge cannot tell from the person's.
func TestStrangersCannotShutTheInboxWindow(t *testing.T) {
	attacker := otheruser.Create(t)
	w := newWorld(t)
	w.start()
	page := w.pageAddress()
	host := strings.TrimSuffix(strings.TrimPrefix(page, "http://"), "/")
	args := []string{"-addr", host, "-fetching", "64", "-idle", "64", "-every", "20s", "-for", "25s"}
	t.Run("another user", func(t *testing.T) {
		w.floodAndAsk(t, page, attacker.Command(otheruser.Copy(t, daemontest.Bin(floodCmd)), args...))
	})
	t.Run("the person's own program", func(t *testing.T) {
		w.floodAndAsk(t, page, exec.Command(daemontest.Bin(floodCmd), args...))
	})
}

// floodAndAsk runs the flood and, while it lasts, asks the page at page as
// the person does.
func (w *world) floodAndAsk(t *testing.T, page string, flood *exec.Cmd) {
	out, err := flood.StdoutPipe()
	must(t, err)
	must(t, flood.Start())
	defer flood.Process.Kill()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("the flood did not start: %q", lines.Text())
	}

	client := &http.Client{Timeout: 10 * time.Second}
	ask := func(method, url, auth string) (int, error) {
		req, err := http.NewRequest(method, url, nil)
		must(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for i := range 10 {
		if code, err := ask("GET", page+"api/entries", "Bearer "+w.secret()); err != nil || code != 200 {
			t.Errorf("the person's request %d during the flood: %d, %v", i, code, err)
		}
		time.Sleep(time.Second)
	}
	link, err := w.nudge("inbox", "--url")
	must(t, err)
	_, token, _ := strings.Cut(strings.TrimSpace(string(link)), "#launch=")
	if code, err := ask("GET", page, ""); err != nil || code != 200 {
		t.Errorf("the sign-in link's page during the flood: %d, %v", code, err)
	}
	if code, err := ask("POST", page+"api/page", "Launch "+token); err != nil || code != 200 {
		t.Errorf("the sign-in during the flood: %d, %v", code, err)
	}

	var res struct {
		Dialled    int     `json:"dialled"`
		OldestOpen float64 `json:"oldest_open"`
	}
	if !lines.Scan() {
		t.Fatalf("the flood ended without its result: %v", flood.Wait())
	}
	must(t, json.Unmarshal(lines.Bytes(), &res))
	flood.Wait()
	// The page's limits close a connection without a credential within
	// 10 s (docs/security.md#limits); the flood ran 25 s.
	if res.OldestOpen > 15 {
		t.Errorf("a stranger's connection was still open after %.0f s (%d dialled)", res.OldestOpen, res.Dialled)
	}
	t.Logf("the flood dialled %d connections", res.Dialled)
}
