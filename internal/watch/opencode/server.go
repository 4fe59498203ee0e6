package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"nudge/internal/proc"
)

// The HTTP server of a running OpenCode process (docs/agents/opencode.md §2.4).
// Only the person's own processes are asked (package proc lists no other),
// and a server is used only when its process's environment could be read:
// it names the database the process writes and the password it asks for.

// ErrNoServer: the process runs no HTTP server nudge can reach.
var ErrNoServer = errors.New("runs no HTTP server on loopback")

// Environment variables of an OpenCode process (§2.1, §2.4).
const (
	envPassword = "OPENCODE_SERVER_PASSWORD"
	envUser     = "OPENCODE_SERVER_USERNAME"
	envDB       = "OPENCODE_DB"
	// defaultUser is the basic-auth user name without OPENCODE_SERVER_USERNAME.
	defaultUser = "opencode"
)

// Server is the HTTP server of one of the person's OpenCode processes.
type Server struct {
	PID int
	// Started identifies the process's run (proc.Process.Started).
	Started string
	// Addr is where it listens, "host:port" on loopback.
	Addr string
	// DB is the database the process writes.
	DB string
	// user and password answer its basic auth; password is "" when it
	// asks for none.
	user, password string
}

// String names the server for logs, never with its password.
func (s Server) String() string { return strconv.Itoa(s.PID) + "@" + s.Addr }

// FindServer reads where p, one of the person's processes, serves as an
// OpenCode server: the loopback address from the sockets it listens on
// (from its command line where the system cannot show sockets), the
// database and the password from its environment. An environment that
// cannot be read is an error: such a server is never used.
func FindServer(p proc.Process) (Server, error) {
	args := p.Args
	if args == nil {
		var err error
		if args, err = proc.Args(p.PID); err != nil {
			return Server{}, err
		}
	}
	cmd, ok := parseCommand(args)
	if !ok || !cmd.server {
		return Server{}, fmt.Errorf("process %d %w", p.PID, ErrNoServer)
	}
	env, err := proc.Env(p.PID)
	if err != nil {
		return Server{}, fmt.Errorf("OpenCode process %d: its environment cannot be read: %w", p.PID, err)
	}
	db, ok := database(env)
	if !ok {
		return Server{}, fmt.Errorf("OpenCode process %d: its environment names no database file", p.PID)
	}
	listening, err := proc.Listening(p.PID)
	addr, err := cmd.addr(listening, err)
	if err != nil {
		return Server{}, fmt.Errorf("OpenCode process %d: %w", p.PID, err)
	}
	// Everything above was read from the same run of p.PID.
	if now, err := proc.Get(p.PID); err != nil || now.Started != p.Started {
		return Server{}, fmt.Errorf("OpenCode process %d: %w", p.PID, proc.ErrGone)
	}
	s := Server{PID: p.PID, Started: p.Started, Addr: addr, DB: db, user: defaultUser}
	if u, ok := proc.Lookup(env, envUser); ok && u != "" {
		s.user = u
	}
	s.password, _ = proc.Lookup(env, envPassword)
	return s, nil
}

// database is the database an OpenCode process uses, from its environment:
// OPENCODE_DB (absolute, or relative to the data folder; ":memory:" is
// none), else $XDG_DATA_HOME/opencode/opencode.db, else ~/.local/share/…
// (§2.1). ok is false when the environment names no file.
func database(env []string) (path string, ok bool) {
	db, _ := proc.Lookup(env, envDB)
	switch {
	case db == ":memory:":
		return "", false
	case filepath.IsAbs(db):
		return filepath.Clean(db), true
	}
	data, _ := proc.Lookup(env, "XDG_DATA_HOME")
	if data == "" {
		home, _ := proc.Lookup(env, "HOME")
		if home == "" {
			return "", false
		}
		data = filepath.Join(home, ".local", "share")
	}
	if db == "" {
		db = "opencode.db"
	}
	return filepath.Join(data, "opencode", db), true
}

// defaultPort is where `opencode serve` listens without --port (§2.4).
const defaultPort = 4096

// command is what an OpenCode command line says of its server.
type command struct {
	server bool   // serve or web, or --port or --hostname given
	host   string // --hostname; "" when not given
	port   int    // --port; 0 when not given or 0 (a port OpenCode picks)
	named  bool   // --port was given
}

// parseCommand reads an OpenCode command line; ok is false for another
// program or a malformed port.
func parseCommand(argv []string) (c command, ok bool) {
	if !isOpenCode(argv) {
		return command{}, false
	}
	for i := 1; i < len(argv); i++ {
		name, value, hasValue := strings.Cut(argv[i], "=")
		switch name {
		case "--port", "--hostname":
			if !hasValue {
				if i+1 >= len(argv) {
					continue
				}
				i++
				value = argv[i]
			}
			c.server = true
			if name == "--hostname" {
				c.host = value
				continue
			}
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 || n > 65535 {
				return command{}, false
			}
			c.port, c.named = n, true
		case "serve", "web":
			c.server = true
		}
	}
	return c, true
}

// addr picks the address of the server: among the loopback (or any-address)
// sockets the process listens on, the port its command line names, else the
// only one. Where the system cannot show sockets (listenErr is
// errors.ErrUnsupported), the command line alone: a named port, or 4096 for
// `serve` without one.
func (c command) addr(listening []netip.AddrPort, listenErr error) (string, error) {
	if errors.Is(listenErr, errors.ErrUnsupported) {
		return c.argvAddr()
	}
	if listenErr != nil {
		return "", listenErr
	}
	var found []netip.AddrPort
	for _, a := range listening {
		ip := a.Addr()
		switch {
		case ip.IsUnspecified() && ip.Is4():
			ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
		case ip.IsUnspecified():
			ip = netip.IPv6Loopback()
		case !ip.IsLoopback():
			continue
		}
		if a := netip.AddrPortFrom(ip, a.Port()); !slices.Contains(found, a) {
			found = append(found, a)
		}
	}
	if c.port != 0 {
		found = slices.DeleteFunc(found, func(a netip.AddrPort) bool { return int(a.Port()) != c.port })
	}
	switch len(found) {
	case 0:
		return "", ErrNoServer
	case 1:
		return found[0].String(), nil
	}
	return "", fmt.Errorf("it listens on %d loopback addresses (%v) and its command line names none of them", len(found), found)
}

// argvAddr is the server's address as its command line says.
func (c command) argvAddr() (string, error) {
	port := c.port
	if !c.named {
		port = defaultPort
	}
	if port == 0 {
		return "", fmt.Errorf("%w: its port (--port 0) is not on its command line and its sockets cannot be read here", ErrNoServer)
	}
	host := c.host
	switch host {
	case "", "localhost", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	if ip, err := netip.ParseAddr(host); err != nil || !ip.IsLoopback() {
		return "", fmt.Errorf("%w: it listens on %s, not on loopback", ErrNoServer, c.host)
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// isOpenCode tells an OpenCode command line: the executable is named
// opencode (the npm launcher runs `node …/bin/opencode`; the native build is
// `opencode` or `.opencode`).
func isOpenCode(argv []string) bool {
	for i, a := range argv[:min(len(argv), 2)] {
		base := strings.TrimPrefix(filepath.Base(a), ".")
		if base == "opencode" || base == "opencode.exe" {
			return true
		}
		if i == 0 && base != "node" && base != "bun" {
			return false
		}
	}
	return false
}

// IsOpenCode tells whether p runs OpenCode.
func IsOpenCode(p proc.Process) bool { return isOpenCode(p.Args) }

// client talks to loopback servers only: no proxy; callers bound each
// request with their context.
var client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}

// Do sends one request to the server, with its password when it asks for
// one; a body is JSON.
func (s Server) Do(ctx context.Context, method, path string, body io.Reader) (*http.Response, error) {
	return s.do(ctx, method, path, body, "application/json")
}

func (s Server) do(ctx context.Context, method, path string, body io.Reader, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+s.Addr+path, body)
	if err != nil {
		return nil, fmt.Errorf("opencode %s %s: %w", method, path, err)
	}
	if s.password != "" {
		req.SetBasicAuth(s.user, s.password)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("opencode %s %s: %w", method, path, err)
	}
	return resp, nil
}

// Stream opens the server's event stream of every instance, GET
// /global/event (§2.4); it lasts until ctx ends or the server closes it.
func (s Server) Stream(ctx context.Context) (io.ReadCloser, error) {
	resp, err := s.do(ctx, http.MethodGet, "/global/event", nil, "text/event-stream")
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return resp.Body, nil
	case http.StatusUnauthorized:
		resp.Body.Close()
		return nil, fmt.Errorf("opencode event stream: %w", ErrUnauthorized)
	}
	resp.Body.Close()
	return nil, fmt.Errorf("opencode event stream: HTTP %d", resp.StatusCode)
}

// ErrUnauthorized: the server refused nudge's credentials (its password
// changed, or it asks for one its environment does not hold).
var ErrUnauthorized = errors.New("the OpenCode server refused the password from its environment (OPENCODE_SERVER_PASSWORD)")

// maxAnswer caps one JSON answer of the server.
const maxAnswer = 8 << 20

// Get reads one JSON answer of the server into v.
func (s Server) Get(ctx context.Context, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := s.Do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	switch {
	case err != nil:
		return fmt.Errorf("opencode %s: %w", path, err)
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("opencode %s: %w", path, ErrUnauthorized)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("opencode %s: HTTP %d", path, resp.StatusCode)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("opencode %s: %w: %.200s", path, err, body)
	}
	return nil
}

// LiveRecords is the live picture of one session from the server of
// process pid, which must still listen at addr: its status (absent =
// idle), then each prompt open in it, as records of the stream (§2.4).
func LiveRecords(ctx context.Context, pid int, addr, session string) ([][]byte, error) {
	p, err := proc.Get(pid)
	if err != nil {
		return nil, err
	}
	s, err := FindServer(p)
	if err != nil {
		return nil, err
	}
	if s.Addr != addr {
		return nil, fmt.Errorf("OpenCode process %d now listens on %s, not %s", pid, s.Addr, addr)
	}
	var statuses map[string]json.RawMessage
	if err := s.Get(ctx, "/session/status", &statuses); err != nil {
		return nil, err
	}
	status, ok := statuses[session]
	if !ok {
		status = json.RawMessage(`{"type":"idle"}`)
	}
	line := func(typ string, props any) []byte {
		b, _ := json.Marshal(map[string]any{"type": typ, "properties": props})
		return b
	}
	out := [][]byte{line("session.status", map[string]any{"sessionID": session, "status": status})}
	for _, box := range []struct{ endpoint, event string }{{"/permission", "permission.asked"}, {"/question", "question.asked"}} {
		var open []map[string]any
		if err := s.Get(ctx, box.endpoint, &open); err != nil {
			return out, err
		}
		for _, p := range open {
			if p["sessionID"] == session {
				out = append(out, line(box.event, p))
			}
		}
	}
	return out, nil
}

// ErrNoSession: the database holds no such session.
var ErrNoSession = errors.New("no such session in the OpenCode database")

// SessionFolder is the folder the database records for session id (the
// `session` table's directory).
func SessionFolder(ctx context.Context, db *sql.DB, id string) (string, error) {
	var dir string
	err := db.QueryRowContext(ctx, "SELECT directory FROM session WHERE id = ?", id).Scan(&dir)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("session %q: %w", id, ErrNoSession)
	case err != nil:
		return "", fmt.Errorf("read opencode session %q: %w", id, err)
	}
	return dir, nil
}
