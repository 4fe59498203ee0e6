// Package mcp is `nudge mcp`: a Model Context Protocol server over stdio
// through which a parent agent asks nudge about the sessions it watches —
// their states and timelines, the Inbox, and when a child's turn ends. It
// reads the daemon's database read-only and reaches the running daemon
// through the Daemon it is given (the control socket); it changes the
// daemon's toggles only when allowed to.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"nudge/internal/classify"
	"nudge/internal/explain"
	"nudge/internal/inbox"
	"nudge/internal/private"
	"nudge/internal/retry"
	"nudge/internal/status"
	"nudge/internal/web"
)

// Daemon is the running daemon as the server reaches it: the control
// socket's client.
type Daemon interface {
	Status(context.Context) (status.Status, error)
	// Watch calls fn with the status at once and after each change until
	// fn returns false.
	Watch(ctx context.Context, fn func(status.Status) bool) error
	Change(context.Context, status.SettingsChange) (status.Settings, error)
	// ContinueAll sends the waiting attempts of a provider's outage now.
	ContinueAll(ctx context.Context, provider string) (int, error)
}

// Options configure the server.
type Options struct {
	// DataDir is the daemon's data folder (its database).
	DataDir string
	// Daemon reaches the running daemon; NotRunning is the error its calls
	// wrap when none runs.
	Daemon     Daemon
	NotRunning error
	// Stored lists stored sessions as the running daemon would show them,
	// for when none runs.
	Stored func(rows []inbox.SessionRow, now time.Time) []status.Session
	// AllowToggles adds the tool that flips the daemon's toggles.
	AllowToggles bool
	// Version is nudge's version, told to the client.
	Version string
	Log     *slog.Logger
}

// Wait bounds, in seconds.
const (
	defaultWait = 300
	maxWait     = 3600
)

// server answers the tools from the database and the control socket.
type server struct {
	opts   Options
	daemon Daemon
}

// NewServer returns the MCP server with its tools.
func NewServer(opts Options) *sdk.Server {
	s := &server{opts: opts, daemon: opts.Daemon}
	srv := sdk.NewServer(&sdk.Implementation{Name: "nudge", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: "nudge watches AI coding agents' sessions (" + agentTitles() + ") and knows how each one's last turn ended: " +
			"done, failed (with the cause and the agent's original error text) or usage-limited (until when). " +
			"Use wait to block until a child session's turn ends; a failed turn is never reported as done. " + untrusted,
		Logger: opts.Log,
	})
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(srv, &sdk.Tool{Name: "list_sessions", Annotations: readOnly, InputSchema: sessionsSchema(),
		Description: "List the sessions nudge watches with their state (" + strings.Join(stateNames(), ", ") + "), newest first. Filter by folder, agent or state."},
		inert(s.listSessions))
	sdk.AddTool(srv, &sdk.Tool{Name: "get_session", Annotations: readOnly,
		Description: "One session's state, how its last turn ended (outcome, class, original error text, reset time, continuations sent) and its timeline of events, decisions and attempts (what `nudge explain --json` shows)."},
		inert(s.getSession))
	sdk.AddTool(srv, &sdk.Tool{Name: "list_inbox", Annotations: readOnly,
		Description: "The Inbox entries, newest first: what nudge told the person, with the original error text. unread: only unread ones."},
		inert(s.listInbox))
	sdk.AddTool(srv, &sdk.Tool{Name: "wait", Annotations: readOnly,
		Description: "Wait until a session's turn ends, then say how: done, failed (class and original error text) or usage_limited (reset_at); outcome timeout when timeout_seconds pass first. " +
			"Pass since (the time you gave the child its task) so that an earlier turn's end does not count. Needs the nudge daemon running."},
		inert(s.wait))
	if opts.AllowToggles {
		sdk.AddTool(srv, &sdk.Tool{Name: "set_toggles", Annotations: &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false)},
			Description: "Flip the daemon's toggles: retry (\"Retry after API errors\"), continue_after_usage_limit, paused. Omitted ones stay; returns the settings in force."},
			inert(s.setToggles))
		sdk.AddTool(srv, &sdk.Tool{Name: "continue_all", Annotations: &sdk.ToolAnnotations{DestructiveHint: new(false)},
			Description: "Continue now every session that waits for a provider's outage to end (of the provider given, else of every provider), spaced out and under the same safety checks; returns how many."},
			inert(s.continueAll))
	}
	return srv
}

// Run serves the tools over stdin and stdout until the client leaves or ctx ends.
func Run(ctx context.Context, opts Options) error {
	return NewServer(opts).Run(ctx, &sdk.StdioTransport{})
}

// SessionsInput filters list_sessions.
type SessionsInput struct {
	Folder string `json:"folder,omitempty" jsonschema:"only sessions working in this folder or below it"`
	Agent  string `json:"agent,omitempty" jsonschema:"only this agent's sessions"`
	State  string `json:"state,omitempty" jsonschema:"only sessions in this state"`
}

// sessionsSchema is SessionsInput's schema with the agents and states
// nudge knows as the values agent and state take.
func sessionsSchema() *jsonschema.Schema {
	s, err := jsonschema.For[SessionsInput](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of SessionsInput: %v", err)) // a type of this package
	}
	s.Properties["agent"].Enum = anyOf(classify.Names())
	s.Properties["state"].Enum = anyOf(stateNames())
	return s
}

// agentTitles names the agents as people write them ("Claude Code, Codex CLI, …").
func agentTitles() string {
	var titles []string
	for _, a := range classify.Agents() {
		titles = append(titles, a.Title)
	}
	return strings.Join(titles, ", ")
}

// stateNames are the states of a session.
func stateNames() []string {
	names := make([]string, len(retry.States))
	for i, st := range retry.States {
		names[i] = string(st)
	}
	return names
}

func anyOf(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// SessionsOutput is the answer of list_sessions.
type SessionsOutput struct {
	// DaemonRunning is false when the list comes from the database alone.
	DaemonRunning bool             `json:"daemon_running"`
	Sessions      []status.Session `json:"sessions"`
}

func (s *server) listSessions(ctx context.Context, _ *sdk.CallToolRequest, in SessionsInput) (*sdk.CallToolResult, SessionsOutput, error) {
	// A filter that names nothing is an error, not an empty list that
	// reads as "no such session".
	if _, ok := classify.Lookup(in.Agent); in.Agent != "" && !ok {
		return nil, SessionsOutput{}, fmt.Errorf("no agent %q (known: %s)", in.Agent, strings.Join(classify.Names(), ", "))
	}
	if in.State != "" && !slices.Contains(retry.States, retry.State(in.State)) {
		names := stateNames()
		return nil, SessionsOutput{}, fmt.Errorf("no state %q (known: %s)", in.State, strings.Join(names, ", "))
	}
	sessions, running, err := s.sessions(ctx)
	if err != nil {
		return nil, SessionsOutput{}, err
	}
	out := SessionsOutput{DaemonRunning: running, Sessions: []status.Session{}}
	for _, ss := range sessions {
		if in.Agent != "" && ss.Agent != in.Agent || in.State != "" && ss.State != in.State || in.Folder != "" && !within(ss.Project, in.Folder) {
			continue
		}
		out.Sessions = append(out.Sessions, ss)
	}
	return nil, out, nil
}

// within reports whether folder dir is root or below it.
func within(dir, root string) bool {
	dir, root = filepath.Clean(dir), filepath.Clean(root)
	return dir == root || strings.HasPrefix(dir, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// sessions are the running daemon's sessions, or the stored ones when no
// daemon runs.
func (s *server) sessions(ctx context.Context) ([]status.Session, bool, error) {
	st, err := s.daemon.Status(ctx)
	if err == nil {
		return st.Sessions, true, nil
	}
	if !errors.Is(err, s.opts.NotRunning) {
		return nil, false, err
	}
	db, err := s.open()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer db.Close()
	rows, err := db.Sessions(ctx)
	if err != nil {
		return nil, false, err
	}
	return s.opts.Stored(rows, time.Now()), false, nil
}

// open opens the daemon's database read-only, in a data folder of this
// user alone (a missing one is fs.ErrNotExist).
func (s *server) open() (*inbox.DB, error) {
	if err := private.Check("data folder", s.opts.DataDir); err != nil {
		return nil, err
	}
	return inbox.OpenReadOnly(filepath.Join(s.opts.DataDir, "nudge.db"))
}

// SessionInput names one session.
type SessionInput struct {
	Session string `json:"session" jsonschema:"the session id, or a prefix of it that matches one session"`
}

// SessionOutput is the answer of get_session.
type SessionOutput struct {
	Turn     Turn             `json:"turn"`
	Timeline explain.Timeline `json:"timeline"`
}

func (s *server) getSession(ctx context.Context, _ *sdk.CallToolRequest, in SessionInput) (*sdk.CallToolResult, SessionOutput, error) {
	live, _, err := s.sessions(ctx)
	if err != nil {
		return nil, SessionOutput{}, err
	}
	turn, tl, err := s.turn(ctx, live, in.Session)
	if err != nil {
		return nil, SessionOutput{}, err
	}
	return nil, SessionOutput{Turn: turn, Timeline: tl}, nil
}

// turn reads the last turn of the session id names: its state from live
// (the running daemon's view) when it is there, else as stored.
func (s *server) turn(ctx context.Context, live []status.Session, id string) (Turn, explain.Timeline, error) {
	db, err := s.open()
	if errors.Is(err, fs.ErrNotExist) {
		return Turn{}, explain.Timeline{}, fmt.Errorf("%w %q: nudge has not recorded anything yet", explain.ErrNoSession, id)
	}
	if err != nil {
		return Turn{}, explain.Timeline{}, err
	}
	defer db.Close()
	row, err := explain.Find(ctx, db, id)
	if err != nil {
		return Turn{}, explain.Timeline{}, err
	}
	tl, err := explain.Load(ctx, db, row.Session)
	if err != nil {
		return Turn{}, explain.Timeline{}, err
	}
	ss, ok := findLive(live, row.Agent, row.Session)
	if !ok {
		stored := s.opts.Stored([]inbox.SessionRow{row}, row.UpdatedAt)
		ss = stored[0]
	}
	return lastTurn(ss, tl), tl, nil
}

func findLive(live []status.Session, agent, session string) (status.Session, bool) {
	for _, ss := range live {
		if ss.Agent == agent && ss.Session == session {
			return ss, true
		}
	}
	return status.Session{}, false
}

// InboxInput filters list_inbox.
type InboxInput struct {
	Unread bool `json:"unread,omitempty" jsonschema:"only entries not marked read"`
}

// InboxOutput is the answer of list_inbox.
type InboxOutput struct {
	Entries []web.Entry `json:"entries"`
}

func (s *server) listInbox(ctx context.Context, _ *sdk.CallToolRequest, in InboxInput) (*sdk.CallToolResult, InboxOutput, error) {
	out := InboxOutput{Entries: []web.Entry{}}
	db, err := s.open()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, out, nil
	}
	if err != nil {
		return nil, out, err
	}
	defer db.Close()
	rows, err := db.Entries(ctx, in.Unread)
	if err != nil {
		return nil, out, err
	}
	for _, r := range rows {
		out.Entries = append(out.Entries, web.NewEntry(r))
	}
	return nil, out, nil
}

// WaitInput names the session to wait for.
type WaitInput struct {
	Session        string `json:"session" jsonschema:"the session id, or a prefix of it that matches one session; a session nudge has not seen yet is waited for"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"give up after this many seconds (default 300, at most 3600)"`
	Since          string `json:"since,omitempty" jsonschema:"RFC 3339 time: only a turn that ended after it counts (default: the current turn, even if it already ended)"`
}

// wait answers when the session's turn ends, from the daemon's change
// stream: it reads the database only when the session's picture changed.
func (s *server) wait(ctx context.Context, _ *sdk.CallToolRequest, in WaitInput) (*sdk.CallToolResult, Turn, error) {
	if in.Session == "" {
		return nil, Turn{}, errors.New("name the session to wait for")
	}
	var since time.Time
	if in.Since != "" {
		t, err := time.Parse(time.RFC3339Nano, in.Since)
		if err != nil {
			return nil, Turn{}, fmt.Errorf("since %q is not an RFC 3339 time: %w", in.Since, err)
		}
		since = t
	}
	timeout := in.TimeoutSeconds
	if timeout <= 0 {
		timeout = defaultWait
	}
	timeout = min(timeout, maxWait)
	wctx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
	defer cancel()

	var (
		last     Turn
		seen     bool
		lastSeen status.Session
		found    bool
		failure  error
	)
	err := s.daemon.Watch(wctx, func(st status.Status) bool {
		ss, inView, err := pick(st.Sessions, in.Session)
		if err != nil {
			failure = err
			return false
		}
		if inView && seen && ss.State == lastSeen.State && ss.UpdatedAt.Equal(lastSeen.UpdatedAt) {
			return true // another session changed
		}
		turn, _, err := s.turn(wctx, st.Sessions, in.Session)
		switch {
		case errors.Is(err, explain.ErrNoSession):
			return true // not recorded yet: wait for it to appear
		case err != nil:
			failure = err
			return false
		}
		seen, lastSeen, last = true, ss, turn
		if turn.endedAfter(since) {
			found = true
			return false
		}
		return true
	})
	switch {
	case failure != nil:
		return nil, Turn{}, failure
	case found:
		return nil, last, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		if !seen {
			last = Turn{Session: in.Session, State: "", Outcome: OutcomeUnknown}
		}
		last.Ended, last.Outcome = false, OutcomeTimeout
		last.Note = fmt.Sprintf("the turn did not end within %d s (state %s)", timeout, orUnknown(last.State))
		return nil, last, nil
	case errors.Is(err, s.opts.NotRunning):
		return nil, Turn{}, fmt.Errorf("wait needs the nudge daemon running to learn when the turn ends (start it with `nudge run`): %w", err)
	case err != nil:
		return nil, Turn{}, err
	}
	return nil, Turn{}, errors.New("the change stream ended")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// pick finds the session id names in the daemon's view: the exact id or
// the one session it is a prefix of; two matches are an error.
func pick(sessions []status.Session, id string) (status.Session, bool, error) {
	var found []status.Session
	for _, ss := range sessions {
		if ss.Session == id {
			return ss, true, nil
		}
		if strings.HasPrefix(ss.Session, id) {
			found = append(found, ss)
		}
	}
	switch len(found) {
	case 0:
		return status.Session{}, false, nil
	case 1:
		return found[0], true, nil
	}
	return status.Session{}, false, fmt.Errorf("%q %w (%d); give more of the id", id, explain.ErrAmbiguous, len(found))
}

// TogglesInput flips toggles; omitted ones stay as they are.
type TogglesInput struct {
	Retry                   *bool `json:"retry,omitempty" jsonschema:"\"Retry after API errors\""`
	ContinueAfterUsageLimit *bool `json:"continue_after_usage_limit,omitempty" jsonschema:"\"Continue after usage limit\""`
	Paused                  *bool `json:"paused,omitempty" jsonschema:"watch without acting"`
}

func (s *server) setToggles(ctx context.Context, _ *sdk.CallToolRequest, in TogglesInput) (*sdk.CallToolResult, status.Settings, error) {
	set, err := s.daemon.Change(ctx, status.SettingsChange{RetryEnabled: in.Retry, ContinueAfterUsageLimit: in.ContinueAfterUsageLimit, Paused: in.Paused})
	if errors.Is(err, s.opts.NotRunning) {
		return nil, set, fmt.Errorf("the toggles live in the running daemon (start it with `nudge run`): %w", err)
	}
	return nil, set, err
}

// ContinueAllInput names the provider whose waiting sessions to continue.
type ContinueAllInput struct {
	Provider string `json:"provider,omitempty" jsonschema:"the provider id (anthropic, openai, …); omitted: every provider"`
}

// ContinueAllOutput says how many sessions were continued.
type ContinueAllOutput struct {
	Continued int `json:"continued"`
}

func (s *server) continueAll(ctx context.Context, _ *sdk.CallToolRequest, in ContinueAllInput) (*sdk.CallToolResult, ContinueAllOutput, error) {
	n, err := s.daemon.ContinueAll(ctx, in.Provider)
	if errors.Is(err, s.opts.NotRunning) {
		return nil, ContinueAllOutput{}, fmt.Errorf("the outages live in the running daemon (start it with `nudge run`): %w", err)
	}
	return nil, ContinueAllOutput{Continued: n}, err
}
