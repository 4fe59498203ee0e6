package web

import (
	"container/list"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"nudge/internal/proc"
)

// gate is a listener that closes at once a connection another user's
// program opened, where the kernel tells (proc.PeerUID), and holds at most
// a fixed number of connections that have not shown a credential yet; a
// connection that does (admit) stops counting. A new connection is always
// let in, and when the room is full a connection without a credential is
// closed for it (pushOut): a stranger cannot keep out a client that shows
// one, which is admitted with its first request (docs/security.md#limits).
type gate struct {
	net.Listener
	max       int
	log       *slog.Logger
	told      sync.Once // of another user's connection
	mu        sync.Mutex
	strangers list.List // of *gatedConn, oldest first
}

func newGate(ln net.Listener, max int, log *slog.Logger) *gate {
	return &gate{Listener: ln, max: max, log: log}
}

func (g *gate) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if uid, ok := g.otherUser(c); ok {
			c.Close()
			g.told.Do(func() {
				g.log.Warn("inbox window: another user's program connected; its connections are closed at once", "uid", uid)
			})
			continue
		}
		return g.enter(c), nil
	}
}

// otherUser reports the user who opened c, when it is known and not this
// user.
func (g *gate) otherUser(c net.Conn) (int, bool) {
	local, ok1 := c.LocalAddr().(*net.TCPAddr)
	peer, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return 0, false
	}
	uid, err := proc.PeerUID(local.AddrPort(), peer.AddrPort())
	return uid, err == nil && uid != os.Getuid()
}

// enter counts c as a stranger, pushing out the oldest one if need be.
func (g *gate) enter(c net.Conn) *gatedConn {
	gc := &gatedConn{Conn: c, gate: g}
	var out *gatedConn
	g.mu.Lock()
	if g.strangers.Len() >= g.max {
		out = g.pushOut()
	}
	gc.place = g.strangers.PushBack(gc)
	g.mu.Unlock()
	if out != nil {
		out.Conn.Close()
	}
	return gc
}

// pushOut takes out the stranger to close for a newcomer: the oldest that
// has said nothing, else the oldest. One that has sent its request is
// about to be admitted, answered or refused, so a client that shows a
// credential is never pushed out by a flood of connections dialled after
// it; called with g.mu held.
func (g *gate) pushOut() *gatedConn {
	pick := g.strangers.Front()
	for e := pick; e != nil; e = e.Next() {
		if c := e.Value.(*gatedConn); !c.spoke.Load() && !pending(c.Conn) {
			pick = e
			break
		}
	}
	c := g.strangers.Remove(pick).(*gatedConn)
	c.place = nil
	return c
}

// pending reports whether c has bytes waiting to be read.
func pending(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var b [1]byte
	n := 0
	if raw.Control(func(fd uintptr) { n, _, _ = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT) }) != nil {
		return false
	}
	return n > 0
}

// gatedConn is a connection let in by a gate; it gives its place back
// when admitted or closed.
type gatedConn struct {
	net.Conn
	gate  *gate
	place *list.Element // nil once admitted, closed or pushed out
	spoke atomic.Bool   // it has sent something
}

func (c *gatedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.spoke.Store(true)
	}
	return n, err
}

// admit records that the connection showed a credential.
func (c *gatedConn) admit() {
	c.gate.mu.Lock()
	defer c.gate.mu.Unlock()
	if c.place != nil {
		c.gate.strangers.Remove(c.place)
		c.place = nil
	}
}

// admitted reports whether the connection has shown a credential (or is
// gone).
func (c *gatedConn) admitted() bool {
	c.gate.mu.Lock()
	defer c.gate.mu.Unlock()
	return c.place == nil
}

func (c *gatedConn) Close() error {
	c.admit()
	return c.Conn.Close()
}
