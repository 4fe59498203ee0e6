// Package snoop runs cmd/snoop, a listener on a 127.0.0.1 port that is not
// nudge's, as another user or this one, and reads what it was sent.
package snoop

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/otheruser"
)

// Cmd is the Go package of the snoop program, for daemontest.Main.
const Cmd = "nudge/e2e/snoop/cmd/snoop"

// Request is one recorded request; a connection is recorded as Method
// "CONNECT" with the peer's address as URL.
type Request struct {
	Method string              `json:"method"`
	URL    string              `json:"url"`
	Header map[string][]string `json:"header"`
	Body   string              `json:"body"`
}

// Snoop is one running listener.
type Snoop struct {
	Addr   string // host:port it listens on
	record string
}

// Start runs the snoop binary bin listening on listen ("127.0.0.1:0" for
// any port, "unix:PATH" for a Unix socket), as user as (nil: this user),
// until the test ends.
func Start(t *testing.T, bin, listen string, as *otheruser.User) *Snoop {
	t.Helper()
	var cmd *exec.Cmd
	var dir string
	if as != nil {
		bin = otheruser.Copy(t, bin)
		dir = as.Dir(t)
		cmd = as.Command(bin)
	} else {
		dir = t.TempDir()
		cmd = exec.Command(bin)
	}
	s := &Snoop{record: filepath.Join(dir, "requests.jsonl")}
	cmd.Args = append(cmd.Args, "-listen", listen, "-record", s.record)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("snoop: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		addr <- strings.TrimSpace(line)
	}()
	select {
	case s.Addr = <-addr:
	case <-time.After(20 * time.Second):
	}
	if s.Addr == "" {
		t.Fatalf("snoop did not start listening on %s: %s", listen, stderr.String())
	}
	return s
}

// Requests is everything the listener was sent so far.
func (s *Snoop) Requests(t *testing.T) []Request {
	t.Helper()
	b, err := os.ReadFile(s.record)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var rs []Request
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r Request
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("snoop record %q: %v", line, err)
		}
		rs = append(rs, r)
	}
	return rs
}

// Leaks lists, for each of secrets found anywhere in what the listener was
// sent (address, headers, body), where it was found.
func (s *Snoop) Leaks(t *testing.T, secrets map[string]string) []string {
	t.Helper()
	var found []string
	for _, r := range s.Requests(t) {
		b, _ := json.Marshal(r)
		for name, secret := range secrets {
			if secret != "" && strings.Contains(string(b), secret) {
				found = append(found, name+" in "+r.Method+" "+r.URL)
			}
		}
	}
	return found
}
