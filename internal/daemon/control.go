package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"nudge/internal/inbox"
	"nudge/internal/status"
	"nudge/internal/usersock"
)

// ErrNotRunning means no daemon answers on the control socket.
var ErrNotRunning = errors.New("nudge is not running")

// SocketPath is the daemon's control socket in dataDir: a Unix socket in a
// user-only folder, itself user-only.
func SocketPath(dataDir string) string { return filepath.Join(dataDir, "nudge.sock") }

// Control is what the control socket asks of the running daemon.
type Control interface {
	Status() status.Status
	Change(status.SettingsChange) (status.Settings, error)
	Quit()
	// Changed is closed at the next change of Status.
	Changed() <-chan struct{}
	// Inbox is the daemon's own database: the CLI's changes go through
	// it, so that an open Inbox window shows them at once.
	Inbox() *inbox.DB
	InboxLaunch() (string, error)
	// ContinueAll sends the waiting attempts of the outages of provider
	// (every provider when "") now, spaced out, and says how many.
	ContinueAll(provider string) (int, error)
	// Used is told of each request, before it is answered.
	Used()
}

// serveControl answers the CLI on the control socket until ctx ends.
// A stale socket from a crash is replaced: the instance lock proves nobody
// owns it.
func serveControl(ctx context.Context, path string, c Control, log *slog.Logger) (func(), error) {
	ln, err := usersock.Listen(path, log)
	if err != nil {
		return nil, fmt.Errorf("control: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, c.Status())
	})
	mux.HandleFunc("POST /settings", func(w http.ResponseWriter, r *http.Request) {
		var ch status.SettingsChange
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&ch); err != nil {
			http.Error(w, "bad settings change: "+err.Error(), http.StatusBadRequest)
			return
		}
		s, err := c.Change(ch)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, s)
	})
	mux.HandleFunc("GET "+changesPath, serveChanges(ctx, c, log))
	mux.HandleFunc("POST /quit", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		go c.Quit()
	})
	mux.HandleFunc("POST /inbox/entries/{id}/read", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			http.Error(w, "bad entry id", http.StatusBadRequest)
			return
		}
		answer(w, c.Inbox().MarkRead(r.Context(), id))
	})
	mux.HandleFunc("POST /inbox/read-all", func(w http.ResponseWriter, r *http.Request) {
		answer(w, c.Inbox().MarkAllRead(r.Context()))
	})
	mux.HandleFunc("POST /inbox/clear", func(w http.ResponseWriter, r *http.Request) {
		answer(w, c.Inbox().Clear(r.Context()))
	})
	mux.HandleFunc("POST /continue", func(w http.ResponseWriter, r *http.Request) {
		var in continueAll
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&in); err != nil {
			http.Error(w, "bad continue request: "+err.Error(), http.StatusBadRequest)
			return
		}
		n, err := c.ContinueAll(in.Provider)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, continueAll{Provider: in.Provider, Continued: n})
	})
	mux.HandleFunc("POST /inbox/launch", func(w http.ResponseWriter, r *http.Request) {
		link, err := c.InboxLaunch()
		if errors.Is(err, ErrNotServing) {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, launch{URL: link})
	})
	used := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.Used()
		mux.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: used, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = os.Remove(path)
	}, nil
}

// launch is the answer of /inbox/launch.
type launch struct {
	URL string `json:"url"` // a one-time sign-in link to the Inbox window
}

// answer reports an Inbox change: 204, 404 for an unknown entry.
func answer(w http.ResponseWriter, err error) {
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, inbox.ErrNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Client talks to the running daemon over its control socket.
type Client struct {
	http   *http.Client
	socket string
}

// NewClient returns a client for the daemon whose data folder is dataDir.
func NewClient(dataDir string) *Client {
	return &Client{http: usersock.Client(SocketPath(dataDir), 5*time.Second), socket: SocketPath(dataDir)}
}

// Status asks the daemon for its status.
func (c *Client) Status(ctx context.Context) (status.Status, error) {
	var s status.Status
	return s, c.do(ctx, http.MethodGet, "/status", nil, &s)
}

// Change flips the daemon's toggles and returns the settings now in force.
func (c *Client) Change(ctx context.Context, ch status.SettingsChange) (status.Settings, error) {
	var s status.Settings
	return s, c.do(ctx, http.MethodPost, "/settings", ch, &s)
}

// Quit asks the daemon to stop.
func (c *Client) Quit(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/quit", nil, nil)
}

// MarkRead marks one Inbox entry read; an unknown id is inbox.ErrNotFound.
func (c *Client) MarkRead(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPost, "/inbox/entries/"+strconv.FormatInt(id, 10)+"/read", nil, nil)
}

// MarkAllRead marks every Inbox entry read.
func (c *Client) MarkAllRead(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/inbox/read-all", nil, nil)
}

// Clear removes every Inbox entry.
func (c *Client) Clear(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/inbox/clear", nil, nil)
}

// continueAll is the body of POST /continue and its answer.
type continueAll struct {
	Provider  string `json:"provider,omitempty"`
	Continued int    `json:"continued"`
}

// ContinueAll asks the daemon to send the waiting attempts of the outages
// of provider ("" for every provider) now; it returns how many.
func (c *Client) ContinueAll(ctx context.Context, provider string) (int, error) {
	var out continueAll
	return out.Continued, c.do(ctx, http.MethodPost, "/continue", continueAll{Provider: provider}, &out)
}

// InboxLaunch asks the running daemon for a new one-time sign-in link to
// its Inbox window; ErrNotServing when it serves none.
func (c *Client) InboxLaunch(ctx context.Context) (string, error) {
	var l launch
	return l.URL, c.do(ctx, http.MethodPost, "/inbox/launch", nil, &l)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://nudge"+path, body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return ErrNotRunning
		}
		return fmt.Errorf("control %s: %w", path, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound && strings.HasPrefix(path, "/inbox/entries/"):
		return fmt.Errorf("control %s: %w", path, inbox.ErrNotFound)
	case resp.StatusCode == http.StatusServiceUnavailable:
		return ErrNotServing
	case resp.StatusCode >= 300:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("control %s: %s: %s", path, resp.Status, bytes.TrimSpace(msg))
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("control %s: %w", path, err)
	}
	return nil
}
