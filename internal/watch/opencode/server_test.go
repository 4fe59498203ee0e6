package opencode

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"nudge/internal/proc"
	"nudge/internal/samples"
	"nudge/internal/watch/agentdb"
	"nudge/internal/watch/opencode/opencodetest"
)

func TestServerAddress(t *testing.T) {
	lo := func(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
	sockets := []netip.AddrPort{lo("127.0.0.1:4311")}
	cases := []struct {
		argv      string
		listening []netip.AddrPort
		unknown   bool // the system cannot show sockets
		want      string
	}{
		{"opencode", sockets, false, ""}, // a TUI without a port is no server
		{"opencode serve", sockets, false, "127.0.0.1:4311"},
		{"opencode serve --port 0", sockets, false, "127.0.0.1:4311"},
		{"opencode serve --port 0", nil, false, ""}, // not listening yet
		{"/x/node_modules/opencode-linux-x64/bin/opencode serve --hostname 127.0.0.1 --port 4311", sockets, false, "127.0.0.1:4311"},
		{"opencode serve --port 4312", sockets, false, ""}, // not on the port it names
		{"node /x/bin/opencode --port=5000", []netip.AddrPort{lo("0.0.0.0:5000")}, false, "127.0.0.1:5000"},
		{"opencode serve", []netip.AddrPort{lo("[::]:4096")}, false, "[::1]:4096"},
		{"opencode serve --hostname 10.0.0.5", []netip.AddrPort{lo("10.0.0.5:4096")}, false, ""},
		{"opencode serve", []netip.AddrPort{lo("127.0.0.1:4096"), lo("127.0.0.1:19876")}, false, ""}, // which one?
		{"opencode serve --port 4096", []netip.AddrPort{lo("127.0.0.1:4096"), lo("127.0.0.1:19876")}, false, "127.0.0.1:4096"},
		{"vim opencode serve", sockets, false, ""},
		{"opencode --port nope", sockets, false, ""},
		// Where sockets cannot be read (macOS), the command line alone.
		{"opencode serve", nil, true, "127.0.0.1:4096"},
		{"opencode serve --hostname localhost --port 4311", nil, true, "127.0.0.1:4311"},
		{"opencode serve --port 0", nil, true, ""},
		{"opencode serve --hostname 10.0.0.5", nil, true, ""},
	}
	for _, c := range cases {
		got := ""
		if cmd, ok := parseCommand(strings.Fields(c.argv)); ok && cmd.server {
			var lerr error
			if c.unknown {
				lerr = errors.ErrUnsupported
			}
			got, _ = cmd.addr(c.listening, lerr)
		}
		if got != c.want {
			t.Errorf("%q listening on %v: address %q, want %q", c.argv, c.listening, got, c.want)
		}
	}
}

func TestDatabasePath(t *testing.T) {
	cases := []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h"}, "/h/.local/share/opencode/opencode.db"},
		{[]string{"HOME=/h", "XDG_DATA_HOME=/d"}, "/d/opencode/opencode.db"},
		{[]string{"HOME=/h", "OPENCODE_DB=/elsewhere/x.db"}, "/elsewhere/x.db"},
		{[]string{"XDG_DATA_HOME=/d", "OPENCODE_DB=other.db"}, "/d/opencode/other.db"},
		{[]string{"HOME=/h", "OPENCODE_DB=:memory:"}, ""},
		{[]string{"OPENCODE_DB=/only/this.db"}, "/only/this.db"},
		{nil, ""},
	}
	for _, c := range cases {
		if got, ok := database(c.env); got != c.want || ok != (c.want != "") {
			t.Errorf("database(%q) = %q, %v; want %q", c.env, got, ok, c.want)
		}
	}
}

// A server started with --port 0 and a password is found from its sockets
// and its environment, and asked with that password.
func TestFindServer(t *testing.T) {
	var auth []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		auth = append(auth, user+":"+pass)
		if !ok || user != "me" || pass != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{}`))
	})
	data := t.TempDir()
	srv := opencodetest.Start(t, h,
		[]string{"XDG_DATA_HOME=" + data, "OPENCODE_SERVER_PASSWORD=s3cret", "OPENCODE_SERVER_USERNAME=me"},
		"serve", "--port", "0")
	p, err := proc.Get(srv.Cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	s, err := FindServer(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr != srv.Addr || s.DB != filepath.Join(data, "opencode", "opencode.db") || s.PID != p.PID || s.Started != p.Started {
		t.Errorf("FindServer = %+v; want %s writing %s", s, srv.Addr, data)
	}
	if strings.Contains(s.String(), "s3cret") {
		t.Errorf("the server's name shows its password: %s", s)
	}
	var v map[string]any
	if err := s.Get(context.Background(), "/session/status", &v); err != nil {
		t.Fatal(err)
	}
	if len(auth) != 1 || auth[0] != "me:s3cret" {
		t.Errorf("credentials sent: %q", auth)
	}
	s.password = "wrong"
	if err := s.Get(context.Background(), "/session/status", &v); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("refused password: %v, want ErrUnauthorized", err)
	}

	// The process that runs no server, or is no OpenCode at all, is none.
	self, err := proc.Get(srv.Cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	self.Args = []string{"opencode"}
	if _, err := FindServer(self); !errors.Is(err, ErrNoServer) {
		t.Errorf("a plain TUI: %v, want ErrNoServer", err)
	}
	srv.Cmd.Process.Kill()
	<-srv.Exited
	if _, err := FindServer(p); !errors.Is(err, proc.ErrGone) {
		t.Errorf("after the process ended: %v, want ErrGone", err)
	}
}

func TestSessionFolder(t *testing.T) {
	db, err := Open(new(agentdb.WAL), samples.Dir("opencode", "ok.opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if dir, err := SessionFolder(ctx, db.DB, "ses_dd44a27b2ffeJB7OXPK95HKcGs"); err != nil || dir != "/home/dev/project" {
		t.Errorf("SessionFolder = %q, %v", dir, err)
	}
	if _, err := SessionFolder(ctx, db.DB, "ses_made_up"); !errors.Is(err, ErrNoSession) {
		t.Errorf("unknown session: %v, want ErrNoSession", err)
	}
}
