// Package web serves the Inbox window: one self-contained page and a JSON
// API on a loopback port, answering only requests that carry the
// per-install secret, name the listener itself as Host, and come from the
// page's own origin (SPEC §6, §7).
package web

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"nudge/internal/inbox"
	"nudge/internal/status"
)

//go:embed assets
var assets embed.FS

// cookieName carries the secret after the page was opened with ?token=.
const cookieName = "nudge_inbox"

// contentPolicy allows only the page's own embedded script and style: no
// inline script, no other origin, no framing.
const contentPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Daemon is what the Inbox window shows of, and changes in, the running daemon.
type Daemon interface {
	Status() status.Status
	Changed() <-chan struct{}
	Change(status.SettingsChange) (status.Settings, error)
}

// Options configure the Inbox window.
type Options struct {
	Addr   string // web.addr: a loopback host and port; port 0 picks a free one
	Secret string // the per-install secret (LoadSecret)
	Daemon Daemon
	Inbox  *inbox.DB
	Log    *slog.Logger
}

// Server is the running Inbox window.
type Server struct {
	srv   *http.Server
	url   string
	hosts map[string]bool // the Host values that name this listener
	stop  context.CancelFunc
	done  chan struct{}
}

// Start binds o.Addr, which must be a loopback address, and serves until
// Stop is called or ctx ends.
func Start(ctx context.Context, o Options) (*Server, error) {
	if len(o.Secret) < 32 {
		return nil, errors.New("inbox window: the secret is missing or too short")
	}
	addr, err := loopback(o.Addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("inbox window: listen on %s: %w", addr, err)
	}
	bound := ln.Addr().(*net.TCPAddr)
	port := fmt.Sprint(bound.Port)
	hostport := net.JoinHostPort(bound.IP.String(), port)
	s := &Server{
		url:   "http://" + hostport + "/",
		hosts: map[string]bool{hostport: true, "localhost:" + port: true},
		done:  make(chan struct{}),
	}
	ctx, s.stop = context.WithCancel(ctx)
	api := &api{d: o.Daemon, db: o.Inbox, log: o.Log}
	s.srv = &http.Server{
		Handler:           s.guard(o.Secret, api.routes()),
		ReadHeaderTimeout: 5 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx }, // ends the event streams on Stop
		ErrorLog:          slog.NewLogLogger(o.Log.Handler(), slog.LevelWarn),
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.Log.Error("inbox window stopped", "err", err)
		}
	}()
	go func() {
		defer close(s.done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(sctx)
		<-served
	}()
	o.Log.Info("inbox window listening", "url", s.url)
	return s, nil
}

// URL is the page's address without the secret, e.g. http://127.0.0.1:41234/.
func (s *Server) URL() string { return s.url }

// Stop closes the listener and every open connection, and waits for it.
func (s *Server) Stop() {
	s.stop()
	<-s.done
}

// loopback checks that addr binds only this machine: a loopback IP or
// "localhost" (taken as 127.0.0.1), with a port.
func loopback(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("inbox window: web.addr %q is not host:port: %w", addr, err)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("inbox window: web.addr %q is not a loopback address; the Inbox window only listens on 127.0.0.1 or ::1", addr)
	}
	return net.JoinHostPort(host, port), nil
}

// guard applies the rules every request must pass, in order: the Host names
// this listener (403, against DNS rebinding), an Origin, if sent, is the
// page's own (403, against cross-site requests), and the secret is present
// (401), as a cookie or a bearer token. Opening "/?token=SECRET" sets the
// cookie and moves on to the page without the token in its address.
func (s *Server) guard(secret string, next http.Handler) http.Handler {
	valid := func(v string) bool { return subtle.ConstantTimeCompare([]byte(v), []byte(secret)) == 1 }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if !s.hosts[r.Host] {
			http.Error(w, "forbidden: unknown host", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			http.Error(w, "forbidden: foreign origin", http.StatusForbidden)
			return
		}
		if token := r.URL.Query().Get("token"); token != "" && r.Method == http.MethodGet && r.URL.Path == "/" {
			if !valid(token) {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: secret, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			enter(w)
			return
		}
		c, err := r.Cookie(cookieName)
		bearer, hasBearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !(err == nil && valid(c.Value)) && !(hasBearer && valid(bearer)) {
			http.Error(w, "unauthorized: open the Inbox with `nudge inbox --open`", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// enter answers the opening request with a page that moves on to "/". A
// page-initiated navigation rather than an HTTP redirect: when the opening
// request came from elsewhere (a launcher file), a redirect chain would
// stay cross-site and the SameSite=Strict cookie would not be sent.
func enter(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(`<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=/"><title>nudge Inbox</title><a href="/">Open the Inbox</a>`))
}
