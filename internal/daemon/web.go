package daemon

import (
	"context"
	"errors"

	"nudge/internal/inbox"
	"nudge/internal/web"
)

// ErrNotServing means the running daemon serves no Inbox window (yet).
var ErrNotServing = errors.New("nudge serves no Inbox window (yet)")

// serveInbox starts the Inbox window on web.addr with a new secret and
// records it for other tools; the returned func stops it and removes the
// record.
func (d *Daemon) serveInbox(ctx context.Context) (func(), error) {
	srv, err := web.Start(ctx, web.Options{Addr: d.cfg.Web.Addr, Daemon: d, Inbox: d.db, Log: d.log.With("stage", "web")})
	if err != nil {
		return nil, err
	}
	if err := srv.Publish(d.cfg.DataDir); err != nil {
		srv.Stop()
		return nil, err
	}
	d.window.Store(srv)
	return func() {
		d.window.Store(nil)
		web.Unpublish(d.cfg.DataDir)
		srv.Stop()
	}, nil
}

// InboxLaunch is a new one-time sign-in link to the running Inbox window.
func (d *Daemon) InboxLaunch() (string, error) {
	srv := d.window.Load()
	if srv == nil {
		return "", ErrNotServing
	}
	return srv.LaunchURL(), nil
}

// OpenInbox shows the Inbox window in the default browser, signed in.
func (d *Daemon) OpenInbox() error {
	link, err := d.InboxLaunch()
	if err != nil {
		return err
	}
	return web.OpenWindow(d.cfg.DataDir, link)
}

// Inbox is the open Inbox database; Run opens it before anything asks.
func (d *Daemon) Inbox() *inbox.DB { return d.db }
