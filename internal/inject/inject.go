// Package inject delivers a continuation into a live session's terminal,
// refusing any target that is not provably the agent's and idle; it never
// decides whether to send.
package inject

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"nudge/internal/classify"
)

// Reasons a delivery is refused or fails. Errors returned by this package wrap
// one of them (errors.Is) and read as a sentence for the person, for example
// "pane %3 now belongs to another process".
var (
	// ErrNoTerminal: no backend found a place to type for the agent process.
	ErrNoTerminal = errors.New("no terminal found")
	// ErrNotInTerminal: the agent process does not run inside this backend's terminal.
	ErrNotInTerminal = errors.New("not in this terminal")
	// ErrGone: the place or the agent process no longer exists.
	ErrGone = errors.New("is gone")
	// ErrOtherProcess: the place no longer holds the agent process (pane ids
	// and pids are reused).
	ErrOtherProcess = errors.New("now belongs to another process")
	// ErrCopyMode: the pane is in copy mode, which would swallow the keys.
	ErrCopyMode = errors.New("is in copy mode")
	// ErrNotIdle: the Target's last-moment Idle or ScreenReady check refused.
	ErrNotIdle = errors.New("agent is not idle")
	// ErrNoScreen: the agent needs its screen checked before typing and the
	// backend cannot show it.
	ErrNoScreen = errors.New("cannot show the screen")
	// ErrBadSession: the session id is not of the shape the agent writes
	// (classify.Agent.SessionID): it is never used.
	ErrBadSession = errors.New("not a session id of the agent")
	// ErrHeld: the place is in use now and nothing was typed; the
	// continuation may be tried again later. It comes with the reason:
	// ErrDraft, ErrLeftover, ErrPresent or ErrCopyMode.
	ErrHeld = errors.New("nothing typed")
	// ErrDraft: the agent's prompt holds text nudge did not type, or does
	// not show at all (docs/behaviour.md §3 "The person at the keyboard").
	ErrDraft = errors.New("has unsent text in the prompt")
	// ErrLeftover: the prompt holds nudge's own continuation, left unsent
	// (a stop between paste and Enter): never sent blindly, never typed
	// over.
	ErrLeftover = errors.New("holds nudge's earlier continuation, unsent")
	// ErrPresent: a person pressed a key in the place moments ago.
	ErrPresent = errors.New("is in use: a key was pressed moments ago")
	// ErrNotAlone: nudge pasted its text but the prompt then held more
	// than it (the person typed meanwhile), so Enter was not pressed.
	ErrNotAlone = errors.New("holds more than the continuation: Enter not pressed")
)

// Refusals are the reasons a delivery is refused for, ErrHeld aside (a
// mark that comes with one of them); the daemon tells each in its own words,
// and a test holds its table to this list.
var Refusals = []error{
	ErrNoTerminal, ErrNotInTerminal, ErrNoProcess, ErrAmbiguous, ErrGone, ErrOtherProcess,
	ErrCopyMode, ErrNotIdle, ErrNoScreen, ErrBadSession, ErrDraft, ErrLeftover, ErrPresent, ErrNotAlone,
}

// PresentFor is how long after a person's last key a place counts as in
// use (docs/behaviour.md §3).
const PresentFor = 5 * time.Second

// Target is the live session a continuation is for.
type Target struct {
	Agent, Session, Project string
	// PID is the agent process (from the live registry or FindProcess); 0
	// if unknown.
	PID int
	// Unfound says why PID is 0 (FindProcess's error, or the registry saying
	// the process exited); nil otherwise.
	Unfound error
	// TmuxPane is the pane from the registry: "%3", or the registry's whole
	// "sess:@win.%pane" value; "" if unknown.
	TmuxPane string
	// Idle, if set, is called immediately before typing; a non-nil error
	// stops the delivery before any key is sent. The daemon uses it to
	// re-read the live registry (no box open, agent idle) at the last moment.
	Idle func(context.Context) error
	// ScreenReady, if set, checks the place's screen right after Idle: the
	// agent's records cannot show an open box, its screen can
	// (classify.Agent.ScreenReady). A backend that cannot show a screen
	// (no Screener) is then refused.
	ScreenReady func(screen string) error
	// Hint describes the session, for backends that must make sure no live
	// process holds it (headless resume).
	Hint Hint
	// ReadComposer, if set, reads the agent's input prompt on the place's
	// screen (classify.Agent.ReadComposer): nudge types only into a prompt
	// it saw empty, and presses Enter only when it holds the continuation
	// alone. A backend that cannot show a screen is then left to the signs
	// of presence (Attender) and its own checks.
	ReadComposer func(screen string, caret classify.Caret) classify.Composer
	// PasteSettle is how long after a paste the agent takes Enter as a new
	// line, not as sending (classify.Agent.PasteSettle): Enter waits that
	// long once the text shows.
	PasteSettle time.Duration
	// Typing, if set, is called after every check, immediately before the
	// first key is sent, with the backend and the place; an error stops the
	// delivery before any key is sent. The daemon records the place with
	// the attempt, so a delivery cut in half can say where.
	Typing func(ctx context.Context, backend string, w Where) error
}

// Where is the place a backend would type into, with what it needs to
// re-verify, at Send, that the place still belongs to the same process.
type Where struct {
	// Server is the terminal's address: for tmux, the server's socket path.
	Server string
	// Pane is the place within it: for tmux, the pane id ("%3").
	Pane string
	// PID is the agent process the place was verified for.
	PID int
	// Started is the agent process's start time as the OS reports it
	// (Linux: /proc/<pid>/stat field 22); a different value later means the
	// pid now names another process.
	Started string
	// PanePID is the process the terminal started in the pane (tmux
	// pane_pid), of which PID is or descends from; 0 where not applicable.
	PanePID int
	// Dir is the folder a headless continuation runs in; "" otherwise.
	Dir string
}

// String is the place in one line, e.g. "/tmp/tmux-1000/default %3".
func (w Where) String() string {
	return strings.TrimSpace(w.Server + " " + w.Pane)
}

// Backend is one way of typing into a terminal (tmux, WezTerm, kitty, …).
type Backend interface {
	// Name is the backend's name in settings (inject.order) and messages.
	Name() string
	// Locate finds where this backend would type for t, or an error saying
	// why it cannot (wrapping ErrNotInTerminal when t is simply not there).
	Locate(ctx context.Context, t Target) (Where, error)
	// Send types text then Enter, literally, after re-verifying that the
	// place still belongs to w.PID and can take keys.
	Send(ctx context.Context, w Where, text string) error
}

// Screener is a Backend that can show what its place displays, for
// Target.ScreenReady and Target.ReadComposer.
type Screener interface {
	// Screen returns the visible text of w.
	Screen(ctx context.Context, w Where) (string, error)
}

// Careter is a Screener that can also tell where the terminal's cursor
// sits on the screen it shows.
type Careter interface {
	Caret(ctx context.Context, w Where) (classify.Caret, error)
}

// Attender is a Backend that can tell when a person last pressed a key in
// its place (zero: never, or not known) and whether the place is in a mode
// of the person's (copy mode, a selection) that typing would act on.
type Attender interface {
	Attended(ctx context.Context, w Where) (Attention, error)
}

// Attention is what an Attender tells of its place.
type Attention struct {
	LastKey time.Time // the person's last key; zero when not known
	Mode    string    // the person's mode ("copy mode"); "" when none
	// Unsent: keys the person typed since they last pressed Enter, as a
	// place that sees every key can tell (nudge wrap).
	Unsent bool
}

// Delivery says where a continuation was (or was to be) typed.
type Delivery struct {
	Backend string // "tmux"
	Where   string // "/tmp/tmux-0/default %3"
}

// Finding is one backend's answer for `nudge doctor`: the place it would use,
// or why it cannot.
type Finding struct {
	Backend string
	Where   string // "" when not located
	Use     bool   // Deliver would type here (the first backend that locates)
	// Err says why this backend cannot deliver: nil when located, unless
	// Deliver would refuse the place it located (ErrNoScreen).
	Err error
}

// Injector tries its backends in order; the first that locates the target
// is the one that types.
type Injector struct {
	backends []Backend
}

// New returns an Injector over backends, in order of preference.
func New(backends ...Backend) *Injector {
	return &Injector{backends: backends}
}

// Backends names the backends in the order they are tried.
func (i *Injector) Backends() []string {
	names := make([]string, len(i.backends))
	for n, b := range i.backends {
		names[n] = b.Name()
	}
	return names
}

// Deliver types text then Enter into the target's terminal: the first backend
// that locates it is used, t.Idle then t.ScreenReady are checked, then that
// backend re-verifies the place and types. A failure after a backend located
// the target is not retried with another backend. The Delivery names the
// place whenever one was located, also on error.
func (i *Injector) Deliver(ctx context.Context, t Target, text string) (Delivery, error) {
	if err := checkSession(t.Agent, t.Session); err != nil {
		return Delivery{}, err
	}
	b, w, err := i.locate(ctx, t)
	if err != nil {
		return Delivery{}, err
	}
	d := Delivery{Backend: b.Name(), Where: w.String()}
	if t.Idle != nil {
		if err := t.Idle(ctx); err != nil {
			return d, fmt.Errorf("%w: %w", ErrNotIdle, err)
		}
	}
	if err := checkScreen(ctx, b, w, t.ScreenReady); err != nil {
		return d, fmt.Errorf("%s %s: %w", d.Backend, d.Where, err)
	}
	if err := checkPerson(ctx, b, w, t.ReadComposer, text, time.Now()); err != nil {
		return d, heldIf(fmt.Errorf("%s %s: %w", d.Backend, d.Where, err))
	}
	if t.Typing != nil {
		if err := t.Typing(ctx, d.Backend, w); err != nil {
			return d, fmt.Errorf("%s %s: nothing typed: %w", d.Backend, d.Where, err)
		}
	}
	if t.ReadComposer != nil {
		ctx = withBeforeEnter(ctx, func(screen string, caret classify.Caret) error {
			if c := t.ReadComposer(screen, caret); !c.Holds(text) {
				return refuse(ErrNotAlone, "the prompt at %s %s holds more than nudge's continuation (%q), so nudge did not press Enter", d.Backend, d.Where, preview(c.Draft))
			}
			return nil
		})
	}
	if t.PasteSettle > 0 {
		ctx = withPasteSettle(ctx, t.PasteSettle)
	}
	if err := b.Send(ctx, w, text); err != nil {
		return d, fmt.Errorf("%s %s: %w", d.Backend, d.Where, err)
	}
	return d, nil
}

// heldIf marks err as held (ErrHeld) when it says a person is using the
// place: a refusal before any key was sent.
func heldIf(err error) error {
	for _, use := range []error{ErrDraft, ErrLeftover, ErrPresent, ErrCopyMode} {
		if errors.Is(err, use) {
			return fmt.Errorf("%w: %w", ErrHeld, err)
		}
	}
	return err
}

// checkPerson refuses a place a person is using (docs/behaviour.md §3 "The
// person at the keyboard"): its mode, a key pressed within PresentFor, keys
// typed and not sent, and, where the screen shows it, an agent's prompt
// that is not empty.
func checkPerson(ctx context.Context, b Backend, w Where, read func(string, classify.Caret) classify.Composer, text string, now time.Time) error {
	if w.PID == 0 {
		return nil // a headless continuation: no terminal, no person in it
	}
	if a, ok := b.(Attender); ok {
		att, err := a.Attended(ctx, w)
		if err != nil {
			return err
		}
		switch {
		case att.Mode != "":
			return refuse(ErrCopyMode, "%s is in %s", w.Pane, att.Mode)
		case att.Unsent:
			return refuse(ErrDraft, "keys typed in %s have not been sent", w.Pane)
		case !att.LastKey.IsZero() && now.Sub(att.LastKey) < PresentFor:
			return refuse(ErrPresent, "a key was pressed in %s %s ago", w.Pane, now.Sub(att.LastKey).Round(100*time.Millisecond))
		}
	}
	sc, ok := b.(Screener)
	if read == nil || !ok {
		return nil
	}
	screen, caret, err := look(ctx, sc, w)
	if err != nil {
		return err
	}
	switch c := read(screen, caret); {
	case !c.Seen:
		return refuse(ErrDraft, "the agent's prompt is not on screen")
	case c.Holds(text):
		return refuse(ErrLeftover, "the prompt holds nudge's continuation, left unsent before")
	case !c.Empty():
		return refuse(ErrDraft, "the prompt holds %q", preview(c.Draft))
	}
	return nil
}

// look is what sc shows at w, with the caret where sc can tell it.
func look(ctx context.Context, sc Screener, w Where) (string, classify.Caret, error) {
	screen, err := sc.Screen(ctx, w)
	if err != nil {
		return "", classify.Caret{}, fmt.Errorf("%w: %w", ErrNoScreen, err)
	}
	var caret classify.Caret
	if c, ok := sc.(Careter); ok {
		if caret, err = c.Caret(ctx, w); err != nil {
			return "", classify.Caret{}, fmt.Errorf("%w: %w", ErrNoScreen, err)
		}
	}
	return screen, caret, nil
}

// preview is the start of a person's draft, for messages: never more than
// a few words of it.
func preview(draft string) string {
	const most = 24
	if r := []rune(draft); len(r) > most {
		return string(r[:most]) + "…"
	}
	return draft
}

// checkScreen runs ready on w's screen. A place with no live process (a
// headless continuation) has no screen that could show a box; any other
// place must be shown by its backend.
func checkScreen(ctx context.Context, b Backend, w Where, ready func(string) error) error {
	if ready == nil || w.PID == 0 {
		return nil
	}
	screen, err := screenOf(ctx, b, w, noScreen(b))
	if err != nil {
		return err
	}
	if err := ready(screen); err != nil {
		return fmt.Errorf("%w: %w", ErrNotIdle, err)
	}
	return nil
}

// checkSession refuses a session id that agent does not write: the id came
// from records, and backends put it on command lines and in URLs. A target
// without a session has none to check.
func checkSession(agent, session string) error {
	if session == "" {
		return nil
	}
	a, ok := classify.Lookup(agent)
	if !ok {
		return refuse(ErrBadSession, "unknown agent %q", agent)
	}
	if err := a.CheckSession(session); err != nil {
		return refuse(ErrBadSession, "%v", err)
	}
	return nil
}

// noScreen refuses b for an agent whose screen must be checked.
// screenOf is what b shows at w now; a backend that shows no screen is
// refused with none.
func screenOf(ctx context.Context, b Backend, w Where, none error) (string, error) {
	sc, ok := b.(Screener)
	if !ok {
		return "", none
	}
	screen, err := sc.Screen(ctx, w)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoScreen, err)
	}
	return screen, nil
}

func noScreen(b Backend) error {
	return refuse(ErrNoScreen, "%s cannot show the screen, and this agent's screen must be checked before typing", b.Name())
}

// Explain asks every backend where it would type for t and why not.
func (i *Injector) Explain(ctx context.Context, t Target) []Finding {
	findings := make([]Finding, 0, len(i.backends))
	bad := checkSession(t.Agent, t.Session)
	chosen := false
	for _, b := range i.backends {
		if bad != nil {
			findings = append(findings, Finding{Backend: b.Name(), Err: bad})
			continue
		}
		w, err := b.Locate(ctx, t)
		f := Finding{Backend: b.Name(), Err: err}
		if err == nil {
			f.Where = w.String()
			f.Use = !chosen
			chosen = true
			if _, ok := b.(Screener); !ok && t.ScreenReady != nil && w.PID != 0 {
				f.Err = noScreen(b)
			}
		}
		findings = append(findings, f)
	}
	return findings
}

// locate returns the first backend that locates t, or an error wrapping
// ErrNoTerminal and every backend's reason.
func (i *Injector) locate(ctx context.Context, t Target) (Backend, Where, error) {
	if len(i.backends) == 0 {
		return nil, Where{}, fmt.Errorf("%w for pid %d: no backend configured", ErrNoTerminal, t.PID)
	}
	var reasons []string
	errs := []error{ErrNoTerminal}
	for _, b := range i.backends {
		w, err := b.Locate(ctx, t)
		if err == nil {
			return b, w, nil
		}
		if ctx.Err() != nil {
			return nil, Where{}, fmt.Errorf("locating pid %d: %w", t.PID, ctx.Err())
		}
		reasons = append(reasons, b.Name()+": "+err.Error())
		errs = append(errs, err)
	}
	if t.Unfound != nil {
		reasons = append([]string{t.Unfound.Error()}, reasons...)
		errs = append(errs, t.Unfound)
	}
	return nil, Where{}, &noTerminal{pid: t.PID, reasons: reasons, errs: errs}
}

// noTerminal is the error of a target no backend located; it wraps
// ErrNoTerminal and each backend's error.
type noTerminal struct {
	pid     int
	reasons []string
	errs    []error
}

func (e *noTerminal) Error() string {
	who := fmt.Sprintf("pid %d", e.pid)
	if e.pid == 0 {
		who = "the session"
	}
	return fmt.Sprintf("no terminal found for %s (%s)", who, strings.Join(e.reasons, "; "))
}

func (e *noTerminal) Unwrap() []error { return e.errs }

// Sees says, per backend in order, what it shows nudge of a person at the
// keyboard (docs/behaviour.md §3 "The person at the keyboard"), for
// `nudge doctor`: "tmux: the agent's prompt on screen, your keys and modes".
func (i *Injector) Sees() []string {
	out := make([]string, 0, len(i.backends))
	for _, b := range i.backends {
		var parts []string
		if _, ok := b.(Screener); ok {
			parts = append(parts, "the agent's prompt on screen")
		}
		if _, ok := b.(Attender); ok {
			parts = append(parts, "your keys and modes")
		}
		if len(parts) == 0 {
			parts = append(parts, "nothing of you at the keyboard")
		}
		out = append(out, b.Name()+": "+strings.Join(parts, ", "))
	}
	return out
}
