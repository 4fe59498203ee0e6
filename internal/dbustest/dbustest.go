// Package dbustest runs a private D-Bus session bus and a recording
// desktop-notification server for tests.
package dbustest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"nudge/internal/testenv"
)

// busConfig is a session bus with no <servicedir>, so nothing auto-starts
// (docs/platform.md §3 "A private bus for tests").
const busConfig = `<busconfig><type>session</type><listen>unix:dir=%s</listen><auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>`

// The notification server's well-known name and object path.
const (
	name = "org.freedesktop.Notifications"
	path = "/org/freedesktop/Notifications"
)

// wait bounds how long a helper waits for the bus or a notification.
const wait = 10 * time.Second

// Bus is a running private dbus-daemon.
type Bus struct {
	Addr string // its address, for DBUS_SESSION_BUS_ADDRESS
	cmd  *exec.Cmd
	dir  string
}

// Start runs a private dbus-daemon; Close stops it. TestMain uses it to set
// DBUS_SESSION_BUS_ADDRESS before anything connects (godbus keeps the
// session bus for the whole process).
func Start() (*Bus, error) {
	// A short folder: the socket path must fit in sun_path (108 bytes).
	dir, err := os.MkdirTemp("", "nudge-bus-")
	if err != nil {
		return nil, fmt.Errorf("dbustest: %w", err)
	}
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, busConfig, dir), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("dbustest: %w", err)
	}
	cmd := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--nopidfile", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("dbustest: %w", err)
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("dbustest: start dbus-daemon: %w", err)
	}
	b := &Bus{cmd: cmd, dir: dir}
	addr := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		addr <- strings.TrimSpace(line)
	}()
	select {
	case b.Addr = <-addr:
	case <-time.After(wait):
	}
	if b.Addr == "" {
		b.Close()
		return nil, errors.New("dbustest: dbus-daemon printed no address")
	}
	return b, nil
}

// Close stops the bus and removes its folder.
func (b *Bus) Close() error {
	b.cmd.Process.Kill()
	b.cmd.Wait()
	return os.RemoveAll(b.dir)
}

// StartBus runs a private bus for the test (which needs dbus-daemon) and
// returns its address; the bus stops when the test ends.
func StartBus(t testing.TB) string {
	t.Helper()
	testenv.Need(t, "dbus-daemon")
	b, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b.Addr
}

// Notification is one org.freedesktop.Notifications.Notify call.
type Notification struct {
	AppName       string
	ReplacesID    uint32
	AppIcon       string
	Summary, Body string
	Actions       []string
	Hints         map[string]dbus.Variant
	ExpireTimeout int32
}

// Recorder owns org.freedesktop.Notifications on a bus and records every
// notification it is sent.
type Recorder struct {
	conn *dbus.Conn
	got  chan Notification
	srv  *server
}

// NewRecorder connects to the bus at addr and takes the notification
// server's name there.
func NewRecorder(addr string) (*Recorder, error) {
	conn, err := dbus.Connect(addr)
	if err != nil {
		return nil, fmt.Errorf("dbustest: connect %s: %w", addr, err)
	}
	r := &Recorder{conn: conn, got: make(chan Notification, 256)}
	r.srv = &server{rec: r, caps: []string{"body"}}
	if err := conn.Export(r.srv, path, name); err != nil {
		conn.Close()
		return nil, fmt.Errorf("dbustest: export %s: %w", path, err)
	}
	reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		conn.Close()
		return nil, fmt.Errorf("dbustest: own %s: reply %v, %v", name, reply, err)
	}
	return r, nil
}

// Record starts a Recorder on the bus at addr for the test.
func Record(t testing.TB, addr string) *Recorder {
	t.Helper()
	r, err := NewRecorder(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// Notifications delivers each recorded notification in arrival order.
func (r *Recorder) Notifications() <-chan Notification { return r.got }

// Next waits (up to 10 s) for the next notification, failing t without one.
func (r *Recorder) Next(t testing.TB) Notification {
	t.Helper()
	select {
	case n := <-r.got:
		return n
	case <-time.After(wait):
		t.Fatal("dbustest: no notification arrived")
		return Notification{}
	}
}

// SetCapabilities sets what the server reports it can do (default: plain
// "body"; a server that renders markup in bodies adds "body-markup").
func (r *Recorder) SetCapabilities(caps ...string) {
	r.srv.mu.Lock()
	defer r.srv.mu.Unlock()
	r.srv.caps = caps
}

// Close gives up the name (so it is free when Close returns) and
// disconnects.
func (r *Recorder) Close() error {
	_, err := r.conn.ReleaseName(name)
	return errors.Join(err, r.conn.Close())
}

// server is the exported D-Bus object: its methods are the interface.
type server struct {
	rec  *Recorder
	mu   sync.Mutex
	id   uint32
	caps []string
}

// Notify records the call and returns an increasing id.
func (s *server) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	s.mu.Lock()
	s.id++
	id := s.id
	s.mu.Unlock()
	n := Notification{AppName: app, ReplacesID: replaces, AppIcon: icon, Summary: summary, Body: body,
		Actions: actions, Hints: hints, ExpireTimeout: timeout}
	select {
	case s.rec.got <- n:
	default: // nobody reads: drop rather than stall the caller
	}
	return id, nil
}

// GetCapabilities reports the capabilities set with SetCapabilities.
func (s *server) GetCapabilities() ([]string, *dbus.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps, nil
}

// GetServerInformation names the recorder.
func (s *server) GetServerInformation() (name, vendor, version, spec string, err *dbus.Error) {
	return "nudge-recorder", "nudge", "1", "1.2", nil
}

// CloseNotification accepts any id.
func (s *server) CloseNotification(id uint32) *dbus.Error { return nil }
