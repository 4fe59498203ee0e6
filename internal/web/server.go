// Package web serves the Inbox window: one self-contained page and a JSON
// API on a loopback port. The page itself holds nothing; every API request
// must name the listener itself as Host, come from the page's own origin,
// and carry a credential: the secret of this run (for other tools) or the
// token of one page load, which a one-time sign-in link hands out and the
// page keeps in its own tab (docs/behaviour.md §6, §7; docs/security.md).
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"nudge/internal/inbox"
	"nudge/internal/status"
)

//go:embed assets
var assets embed.FS

// contentPolicy allows only the page's own embedded script and style: no
// inline script, no other origin, no framing.
const contentPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// limits bound what a client may hold of the server.
type limits struct {
	readHeader, read time.Duration // a request's header; all of it, body included
	write            time.Duration // an answer; on the event stream, each write
	idle             time.Duration // between requests on a connection
	// strangers is how many connections may be open at once without
	// having shown a credential; one more pushes out the oldest of them.
	strangers int
}

var defaultLimits = limits{
	readHeader: 5 * time.Second, read: 10 * time.Second, write: 10 * time.Second, idle: 30 * time.Second,
	strangers: 64,
}

const (
	maxHeaderBytes = 16 << 10
	maxBody        = 64 << 10 // a request body, checked before the credential
)

// The credentials the server hands out.
const (
	launchTTL = 5 * time.Minute  // a sign-in link, good once
	ticketTTL = 30 * time.Second // an event-stream ticket, good once
	maxLaunch = 16
	maxTicket = 64
	maxPages  = 32 // page loads signed in at once; the oldest is signed out
)

// Daemon is what the Inbox window shows of, and changes in, the running daemon.
type Daemon interface {
	Status() status.Status
	Changed() <-chan struct{}
	Change(status.SettingsChange) (status.Settings, error)
	// ContinueAll continues the sessions waiting for the outages of
	// provider (every provider when "") now and says how many.
	ContinueAll(provider string) (int, error)
	// Used is told of each request, before it is answered.
	Used()
}

// Options configure the Inbox window.
type Options struct {
	Addr   string // web.addr: a loopback host and port; port 0 picks a free one
	Daemon Daemon
	Inbox  *inbox.DB
	Log    *slog.Logger
}

// Server is the running Inbox window.
type Server struct {
	srv      *http.Server
	url      string
	hosts    map[string]bool // the Host values that name this listener
	secret   string          // this run's secret, new at every start
	launches *passes         // one-time sign-in links
	pages    *passes         // the tokens of signed-in page loads
	tickets  *passes         // one-time event-stream tickets
	stop     context.CancelFunc
	done     chan struct{}
}

// connKey carries a request's connection in its context.
type connKey struct{}

// Start binds o.Addr, which must be a loopback address, and serves until
// Stop is called or ctx ends, with a new secret.
func Start(ctx context.Context, o Options) (*Server, error) { return start(ctx, o, defaultLimits) }

func start(ctx context.Context, o Options, lim limits) (*Server, error) {
	addr, err := loopback(o.Addr)
	if err != nil {
		return nil, err
	}
	ln, err := listen(addr, o.Log)
	if err != nil {
		return nil, err
	}
	bound := ln.Addr().(*net.TCPAddr)
	port := fmt.Sprint(bound.Port)
	hostport := net.JoinHostPort(bound.IP.String(), port)
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails (crypto/rand)
	s := &Server{
		url:      "http://" + hostport + "/",
		hosts:    map[string]bool{hostport: true, "localhost:" + port: true},
		secret:   hex.EncodeToString(raw),
		launches: newPasses(launchTTL, maxLaunch, true),
		pages:    newPasses(0, maxPages, false),
		tickets:  newPasses(ticketTTL, maxTicket, true),
		done:     make(chan struct{}),
	}
	ctx, s.stop = context.WithCancel(ctx)
	api := &api{d: o.Daemon, db: o.Inbox, log: o.Log, pages: s.pages, tickets: s.tickets, writeTimeout: lim.write}
	s.srv = &http.Server{
		Handler:           used(o.Daemon, s.guard(api.routes())),
		ReadHeaderTimeout: lim.readHeader,
		ReadTimeout:       lim.read,
		WriteTimeout:      lim.write,
		IdleTimeout:       lim.idle,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx }, // ends the event streams on Stop
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		ErrorLog:          slog.NewLogLogger(o.Log.Handler(), slog.LevelWarn),
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := s.srv.Serve(newGate(ln, lim.strangers, o.Log)); err != nil && !errors.Is(err, http.ErrServerClosed) {
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

// URL is the page's address, e.g. http://127.0.0.1:41234/.
func (s *Server) URL() string { return s.url }

// LaunchURL is a new one-time sign-in link to the page: the first page
// load that uses it, within launchTTL, is signed in; nothing else ever is
// with it.
func (s *Server) LaunchURL() string { return s.url + "#launch=" + s.launches.issue() }

// Stop closes the listener and every open connection, and waits for it.
func (s *Server) Stop() {
	s.stop()
	<-s.done
}

// listen binds addr. A port already taken (by another program, or by
// another user squatting it) does not keep nudge from running: the window
// takes a free port of the same host instead, and says so in the log;
// `nudge inbox --open` finds it there (docs/security.md).
func listen(addr string, log *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	host, port, _ := net.SplitHostPort(addr)
	if errors.Is(err, syscall.EADDRINUSE) && port != "0" {
		var free error
		if ln, free = net.Listen("tcp", net.JoinHostPort(host, "0")); free == nil {
			log.Warn("the Inbox window's port is taken; it listens on a free one instead (`nudge inbox --open` finds it)",
				"web.addr", addr, "url", "http://"+ln.Addr().String()+"/", "err", err)
			return ln, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("inbox window: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// CheckAddr reports whether addr (web.addr) is refused: it must be a
// loopback address with a port.
func CheckAddr(addr string) error {
	_, err := loopback(addr)
	return err
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

// used tells d of each request, refused or not, before next answers it.
func used(d Daemon, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.Used()
		next.ServeHTTP(w, r)
	})
}

// guard applies the rules every request must pass, in order: the Host
// names this listener (403, against DNS rebinding), an Origin, if sent, is
// the page's own (403, against cross-site requests), the body is not too
// large (413), and, except for the page's own files, a credential (401).
// A refused request's connection is closed at once, and a page file ends a
// connection that has shown no credential.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		switch {
		case !s.hosts[r.Host]:
			refuse(w, http.StatusForbidden, "forbidden: unknown host")
			return
		case r.Header.Get("Origin") != "" && r.Header.Get("Origin") != "http://"+r.Host:
			refuse(w, http.StatusForbidden, "forbidden: foreign origin")
			return
		case r.ContentLength > maxBody:
			refuse(w, http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		c, _ := r.Context().Value(connKey{}).(*gatedConn)
		if pageFile(r) {
			if c != nil && !c.admitted() {
				// A connection that never shows a credential ends with
				// its answer, whatever it asks for.
				h.Set("Connection", "close")
			}
			next.ServeHTTP(w, r)
			return
		}
		if !s.signedIn(r) {
			refuse(w, http.StatusUnauthorized, "unauthorized: open the Inbox with `nudge inbox --open`")
			return
		}
		if c != nil {
			c.admit()
		}
		next.ServeHTTP(w, r)
	})
}

// pageFile reports whether r asks for one of the page's own files, which
// hold nothing but the page: they are served without a credential, so
// that a page can load and then sign in from its own tab.
func pageFile(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch r.URL.Path {
	case "/", "/app.js", "/app.css":
		return true
	}
	return false
}

// signedIn reports whether r carries a credential good for what it asks:
// a sign-in link to trade for a page token ("Authorization: Launch ..."
// on POST /api/page), a ticket on the event stream (which cannot send
// headers), or, for everything, this run's secret or a page token as a
// bearer token.
func (s *Server) signedIn(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	if r.Method == http.MethodPost && r.URL.Path == "/api/page" {
		launch, ok := strings.CutPrefix(auth, "Launch ")
		return ok && s.launches.use(launch)
	}
	if bearer, ok := strings.CutPrefix(auth, "Bearer "); ok {
		return subtle.ConstantTimeCompare([]byte(bearer), []byte(s.secret)) == 1 || s.pages.use(bearer)
	}
	if r.Method == http.MethodGet && r.URL.Path == "/api/events" {
		return s.tickets.use(r.URL.Query().Get("ticket"))
	}
	return false
}

// refuse answers a request that does not pass and drops its connection
// right after: no waiting for a body it will not read, nor for another
// request.
func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}
