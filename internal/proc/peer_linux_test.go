package proc

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"nudge/internal/testenv"
)

// The owner of a loopback connection's other end is read from the kernel:
// this user for a connection of this process's, another user's id for one
// of theirs.
func TestPeerUID(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accept := func() net.Conn {
		t.Helper()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ends := func(c net.Conn) (local, peer netip.AddrPort) {
		return c.LocalAddr().(*net.TCPAddr).AddrPort(), c.RemoteAddr().(*net.TCPAddr).AddrPort()
	}
	mine, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	if uid, err := PeerUID(ends(accept())); err != nil || uid != os.Getuid() {
		t.Errorf("own connection: uid %d, %v; want %d", uid, err, os.Getuid())
	}
	if _, err := PeerUID(netip.MustParseAddrPort("127.0.0.1:1"), netip.MustParseAddrPort("127.0.0.1:2")); err == nil {
		t.Error("a connection that does not exist has an owner")
	}

	if os.Geteuid() != 0 {
		testenv.Missing(t, "connecting as another user needs root")
	}
	bash := testenv.Need(t, "bash")
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	cmd := exec.Command(bash, "-c", "exec 3<>/dev/tcp/127.0.0.1/"+port+" && read -r _")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	if uid, err := PeerUID(ends(accept())); err != nil || uid != 65534 {
		t.Errorf("another user's connection: uid %d, %v; want 65534", uid, err)
	}
}
