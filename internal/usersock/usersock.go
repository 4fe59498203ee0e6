// Package usersock serves and reaches HTTP over Unix sockets that only this
// user can use: the daemon's control socket and each `nudge wrap`'s socket.
package usersock

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Listen opens a socket at path, mode 0600 (its folder should be 0700), that
// accepts only connections from this user: a peer of another uid is dropped
// and logged. A socket file left at path by a process that is gone is
// replaced: the caller holds whatever proves nobody else owns the path.
//
// The socket appears at path only once it is user-only and accepting: it is
// made under a name of its own beside path, as long as path's (a socket's
// path is short), and renamed into place, so a client that sees the file
// never meets a refused connection.
func Listen(path string, log *slog.Logger) (net.Listener, error) {
	tmp := filepath.Join(filepath.Dir(path), "~"+filepath.Base(path)[1:])
	if filepath.Base(path)[0] == '~' {
		tmp = filepath.Join(filepath.Dir(path), "#"+filepath.Base(path)[1:])
	}
	if most := len(syscall.RawSockaddrUnix{}.Path) - 1; len(tmp) > most {
		return nil, fmt.Errorf("socket %s: its path is %d bytes long, and a socket's may have at most %d here; "+
			"choose a data folder with a shorter path (NUDGE_DATA_DIR)", path, len(path), most)
	}
	_ = os.Remove(tmp)
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // Close removes path itself
	err = os.Chmod(tmp, 0o600)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	return &sameUser{Listener: ln, path: path, uid: os.Getuid(), log: log}, nil
}

// sameUser drops every connection whose peer is another user.
type sameUser struct {
	net.Listener
	path string
	uid  int
	log  *slog.Logger
}

// Close stops listening and removes the socket file.
func (l *sameUser) Close() error {
	err := l.Listener.Close()
	_ = os.Remove(l.path)
	return err
}

func (l *sameUser) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uc, ok := c.(*net.UnixConn)
		if !ok {
			c.Close()
			return nil, fmt.Errorf("socket: unexpected connection type %T", c)
		}
		uid, err := peerUID(uc)
		if err == nil && uid == l.uid {
			return c, nil
		}
		l.log.Warn("refused a connection from another user", "uid", uid, "err", err)
		c.Close()
	}
}

// Client is an HTTP client whose every request goes to the socket at path,
// and only when this user serves it: a socket another user put there
// never gets a request.
func Client(path string, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "unix", path)
			if err != nil {
				return nil, err
			}
			uid, err := peerUID(c.(*net.UnixConn))
			if err == nil && uid != os.Getuid() {
				err = fmt.Errorf("socket %s is served by another user (uid %d), not by you", path, uid)
			}
			if err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		}},
	}
}
