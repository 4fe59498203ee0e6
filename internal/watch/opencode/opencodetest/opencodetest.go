// Package opencodetest runs stand-ins for OpenCode servers in tests: a real
// process named opencode, with an OpenCode command line and environment,
// that holds the listening socket of a handler the test serves, as a real
// `opencode serve` holds its own.
package opencodetest

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"nudge/internal/testenv"
)

// Server is a running stand-in.
type Server struct {
	Cmd  *exec.Cmd
	Addr string // host:port
	// Exited is closed once the process has ended.
	Exited <-chan struct{}
}

// Start serves h on a loopback port and starts the stand-in process with
// env: `opencode -c <script> ARGS…`, where ARGS are args with "{port}"
// replaced by the port, or `serve --port <port>` when args is empty. The
// server closes when the process ends; both stop with the test.
func Start(t testing.TB, h http.Handler, env []string, args ...string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if len(args) == 0 {
		args = []string{"serve", "--port", "{port}"}
	}
	argv := []string{"-c", "sleep 600; exit 0"}
	for _, a := range args {
		if a == "{port}" {
			a = port
		}
		argv = append(argv, a)
	}
	// /bin/sh under the name opencode: it waits for its sleep, so its
	// command line stays as given.
	exe := filepath.Join(t.TempDir(), "opencode")
	if err := os.Symlink("/bin/sh", exe); err != nil {
		t.Fatal(err)
	}
	tcp := ln.(*net.TCPListener)
	sock, err := tcp.File()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, argv...)
	cmd.Env, cmd.ExtraFiles = env, []*os.File{sock}
	err = cmd.Start()
	sock.Close()
	if err != nil {
		t.Fatal(err)
	}
	testenv.Execed(cmd.Process.Pid) // its command line tells it is OpenCode
	// Handing the socket over made it blocking, for the listener too (they
	// share one open file): non-blocking again before serving on it.
	rc, err := tcp.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var nbErr error
	if err := rc.Control(func(fd uintptr) { nbErr = syscall.SetNonblock(int(fd), true) }); err != nil || nbErr != nil {
		t.Fatal(err, nbErr)
	}
	// The server lives as long as its process, as OpenCode's does: its
	// connections close when the process ends.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		srv.Close()
		close(exited)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	return &Server{Cmd: cmd, Addr: ln.Addr().String(), Exited: exited}
}
