package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"time"

	"nudge/internal/explain"
	"nudge/internal/inbox"
	"nudge/internal/status"
)

// Entry is one Inbox entry as the API gives it.
type Entry struct {
	ID        int64     `json:"id"`
	Time      time.Time `json:"time"`
	Agent     string    `json:"agent"`
	Project   string    `json:"project"`
	Session   string    `json:"session"`
	What      string    `json:"what"`       // what happened, in a sentence
	ErrorText string    `json:"error_text"` // the original error text, from the transcript
	Class     string    `json:"class"`
	Code      string    `json:"code"`
	Attempts  int       `json:"attempts"`           // continuations sent
	Provider  string    `json:"provider,omitempty"` // the provider id the failure happened on
	Model     string    `json:"model,omitempty"`
	// Outage names the outage the entry belongs to; the outage's own
	// entry has no session, and its sessions' entries come under it.
	Outage string `json:"outage,omitempty"`
	Read   bool   `json:"read"`
}

// keepAlive is how often an idle event stream sends a comment, so that a
// dead connection is noticed.
const keepAlive = 25 * time.Second

type api struct {
	d       Daemon
	db      *inbox.DB
	log     *slog.Logger
	pages   *passes // the tokens of signed-in page loads
	tickets *passes // event-stream tickets
	// writeTimeout bounds each write of the event stream.
	writeTimeout time.Duration
}

func (a *api) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", a.asset("index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /app.js", a.asset("app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /app.css", a.asset("app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("POST /api/page", a.issue(a.pages, "token"))
	mux.HandleFunc("POST /api/events/ticket", a.issue(a.tickets, "ticket"))
	mux.HandleFunc("GET /api/status", a.status)
	mux.HandleFunc("GET /api/sessions/{id}", a.session)
	mux.HandleFunc("GET /api/sessions/{id}/timeline", a.timeline)
	mux.HandleFunc("GET /api/entries", a.entries)
	mux.HandleFunc("GET /api/picture", a.picture)
	mux.HandleFunc("POST /api/entries/{id}/read", a.markRead)
	mux.HandleFunc("POST /api/entries/read-all", a.change(a.db.MarkAllRead))
	mux.HandleFunc("POST /api/entries/clear", a.change(a.db.Clear))
	mux.HandleFunc("POST /api/settings", a.settings)
	mux.HandleFunc("POST /api/continue", a.continueAll)
	mux.HandleFunc("GET /api/events", a.events)
	return mux
}

func (a *api) asset(name, contentType string) http.HandlerFunc {
	body, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(fmt.Sprintf("web: embedded %s missing: %v", name, err)) // a build defect, caught by every test
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}
}

// issue answers with a new pass of p, as {"<name>": "<pass>"}. The guard
// has checked what the request traded for it: a sign-in link for a page
// token, a page token for a ticket.
func (a *api) issue(p *passes, name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]string{name: p.issue()})
	}
}

// windowStatus is the daemon's picture as the Inbox window shows it: with
// the overall look, judged with the unread entries as the menu-bar icon
// judges it (docs/behaviour.md §6).
type windowStatus struct {
	status.Status
	Overall      status.Look `json:"overall"`
	OverallWords string      `json:"overall_words"`
}

func withOverall(st status.Status, unread int) windowStatus {
	l := status.Overall(st, unread)
	return windowStatus{Status: st, Overall: l, OverallWords: l.Words()}
}

func (a *api) status(w http.ResponseWriter, r *http.Request) {
	unread, err := a.db.Unread(r.Context())
	if err != nil {
		a.fail(w, err)
		return
	}
	writeJSON(w, withOverall(a.d.Status(), unread))
}

// session answers a parent agent asking about one session: its status by
// exact id, or by a prefix that matches only one session.
func (a *api) session(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var found []status.Session
	for _, s := range a.d.Status().Sessions {
		if s.Session == id {
			writeJSON(w, s)
			return
		}
		if len(id) >= 4 && len(s.Session) > len(id) && s.Session[:len(id)] == id {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		http.Error(w, fmt.Sprintf("no session %q", id), http.StatusNotFound)
	case 1:
		writeJSON(w, found[0])
	default:
		http.Error(w, fmt.Sprintf("%q matches %d sessions; give more of the id", id, len(found)), http.StatusConflict)
	}
}

// Timeline is one session's timeline as the API gives it: what `nudge
// explain --json` prints, with its state and its story in words.
type Timeline struct {
	explain.Timeline
	StateWords string         `json:"state_words"`
	Story      []explain.Line `json:"story"`
}

// timeline answers with the timeline of the session the id (or a prefix
// that matches one session) names.
func (a *api) timeline(w http.ResponseWriter, r *http.Request) {
	tl, err := explain.Load(r.Context(), a.db, r.PathValue("id"))
	switch {
	case errors.Is(err, explain.ErrNoSession):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.Is(err, explain.ErrAmbiguous):
		http.Error(w, err.Error(), http.StatusConflict)
	case err != nil:
		a.fail(w, err)
	default:
		writeJSON(w, Timeline{Timeline: tl, StateWords: status.StateWords(tl.State), Story: tl.Story()})
	}
}

func (a *api) entries(w http.ResponseWriter, r *http.Request) {
	es, err := a.list(r, r.URL.Query().Get("unread") == "1")
	if err != nil {
		a.fail(w, err)
		return
	}
	writeJSON(w, es)
}

func (a *api) list(r *http.Request, unread bool) ([]Entry, error) {
	rows, err := a.db.Entries(r.Context(), unread)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(rows))
	for i, e := range rows {
		out[i] = NewEntry(e)
	}
	return out, nil
}

// NewEntry is the API's shape of a stored Inbox entry.
func NewEntry(e inbox.EntryRow) Entry {
	return Entry{ID: e.ID, Time: e.Time, Agent: e.Agent, Project: e.Project, Session: e.Session, What: e.What,
		ErrorText: e.ErrorText, Class: e.Class, Code: e.Code, Attempts: e.Attempts, Provider: e.Provider, Model: e.Model, Outage: e.Outage, Read: e.Read}
}

func (a *api) markRead(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "bad entry id", http.StatusBadRequest)
		return
	}
	a.change(func(ctx context.Context) error { return a.db.MarkRead(ctx, id) })(w, r)
}

// change runs an Inbox change and answers 204, 404 for an unknown entry.
func (a *api) change(fn func(context.Context) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(r.Context()); err != nil {
			a.fail(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (a *api) settings(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "send the settings change as application/json", http.StatusUnsupportedMediaType)
		return
	}
	var ch status.SettingsChange
	dec := json.NewDecoder(r.Body) // at most maxBody (guard)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ch); err != nil {
		http.Error(w, "bad settings change: "+err.Error(), http.StatusBadRequest)
		return
	}
	s, err := a.d.Change(ch)
	if err != nil {
		a.fail(w, err)
		return
	}
	writeJSON(w, s)
}

// events streams the status and the entries as server-sent events: both at
// once on connect, then each again whenever it changed. The stream has no
// overall time limit; each write must get through within a.writeTimeout.
func (a *api) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	// The request was read in full; the server's read timeout must not
	// end the stream.
	if err := rc.SetReadDeadline(time.Time{}); err != nil {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	send := func(b []byte) error {
		if err := rc.SetWriteDeadline(time.Now().Add(a.writeTimeout)); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if send(nil) != nil {
		return
	}
	var lastStatus, lastEntries []byte
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		// Take the change signals before reading, so that no change
		// between the read and the wait is missed.
		daemonChanged, inboxChanged := a.d.Changed(), a.db.Changed()
		es, err := a.list(r, false)
		if err != nil {
			if r.Context().Err() == nil {
				a.log.Error("inbox window: read entries", "err", err)
			}
			return
		}
		unread := 0
		for _, e := range es {
			if !e.Read {
				unread++
			}
		}
		st, err := json.Marshal(withOverall(a.d.Status(), unread))
		if err != nil {
			a.log.Error("inbox window: encode status", "err", err)
			return
		}
		ent, err := json.Marshal(es)
		if err != nil {
			a.log.Error("inbox window: encode entries", "err", err)
			return
		}
		var out []byte
		if !bytes.Equal(st, lastStatus) {
			out = fmt.Appendf(out, "event: status\ndata: %s\n\n", st)
			lastStatus = st
		}
		if !bytes.Equal(ent, lastEntries) {
			out = fmt.Appendf(out, "event: entries\ndata: %s\n\n", ent)
			lastEntries = ent
		}
		if len(out) > 0 && send(out) != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-daemonChanged:
		case <-inboxChanged:
		case <-tick.C:
			if send([]byte(": still here\n\n")) != nil {
				return
			}
		}
	}
}

func (a *api) fail(w http.ResponseWriter, err error) {
	if errors.Is(err, inbox.ErrNotFound) {
		http.Error(w, "no such entry", http.StatusNotFound)
		return
	}
	a.log.Error("inbox window: request failed", "err", err)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
