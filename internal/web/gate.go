package web

import (
	"net"
	"sync"
	"time"
)

// gate is a listener that holds at most a fixed number of connections
// that have not shown a credential yet; a connection that does (admit)
// stops counting. A new connection waits up to wait for room, then is
// closed unanswered.
type gate struct {
	net.Listener
	room chan struct{}
	wait time.Duration
}

func newGate(ln net.Listener, max int, wait time.Duration) *gate {
	return &gate{Listener: ln, room: make(chan struct{}, max), wait: wait}
}

func (g *gate) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if g.enter() {
			return &gatedConn{Conn: c, room: g.room}, nil
		}
		c.Close()
	}
}

// enter takes a place, waiting up to g.wait for one.
func (g *gate) enter() bool {
	select {
	case g.room <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.room <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

// gatedConn is a connection let in by a gate; it gives its place back
// when admitted or closed.
type gatedConn struct {
	net.Conn
	room  chan struct{}
	leave sync.Once
}

// admit records that the connection showed a credential.
func (c *gatedConn) admit() { c.leave.Do(func() { <-c.room }) }

func (c *gatedConn) Close() error {
	c.admit()
	return c.Conn.Close()
}
