package daemon

import (
	"context"

	"nudge/internal/web"
)

// serveInbox starts the Inbox window on web.addr and records where it runs
// for the CLI and the menu; the returned func stops it and removes the record.
func (d *Daemon) serveInbox(ctx context.Context) (func(), error) {
	secret, err := web.LoadSecret(d.cfg.DataDir)
	if err != nil {
		return nil, err
	}
	srv, err := web.Start(ctx, web.Options{
		Addr: d.cfg.Web.Addr, Secret: secret, Daemon: d, Inbox: d.db, Log: d.log.With("stage", "web"),
	})
	if err != nil {
		return nil, err
	}
	if err := web.Publish(d.cfg.DataDir, srv.URL(), secret); err != nil {
		srv.Stop()
		return nil, err
	}
	return func() {
		web.Unpublish(d.cfg.DataDir)
		srv.Stop()
	}, nil
}

// InboxURL is the running Inbox window's address with the per-install
// secret, for "Open Inbox…".
func (d *Daemon) InboxURL() (string, error) { return web.PageURL(d.cfg.DataDir) }
