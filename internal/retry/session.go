// Package retry is the per-session state machine of SPEC §3–5: a session's
// events and the time go in, actions (continue, tell, wait) come out.
package retry

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
)

// BacklogRecent is how old a provider error written while nudge was not
// running may be and still be retried; so late may a continuation due while
// nudge was not running still be sent (docs/durability.md).
const BacklogRecent = 10 * time.Minute

// Purpose says what a continuation is for.
type Purpose string

// The two automations that send a continuation.
const (
	ForRetry      Purpose = "retry"       // a provider error (SPEC §3)
	ForUsageLimit Purpose = "usage_limit" // "Continue after usage limit" (SPEC §5)
)

// Episode is a run of provider errors not broken by a completed turn or a
// person's message: the "same error" whose attempts are counted.
type Episode struct {
	ID       string           `json:"id"`                 // names the episode in the attempt ledger
	Original classify.Failure `json:"original"`           // the error that started the episode
	Latest   classify.Failure `json:"latest"`             // the most recent error
	FailedAt time.Time        `json:"failed_at,omitzero"` // the latest dead turn's record time
	Attempts int              `json:"attempts"`           // continuations issued
	Over     bool             `json:"over,omitempty"`     // nudge gave up and told the person
}

// Limit is a usage limit in force (SPEC §5).
type Limit struct {
	Failure      classify.Failure `json:"failure"`
	AutoContinue bool             `json:"auto_continue,omitempty"` // the agent armed its own continuation
	Fired        bool             `json:"fired,omitempty"`         // nudge's one continuation was issued (or given up)
}

// Pending is the one continuation waiting to be sent.
type Pending struct {
	For       Purpose       `json:"for"`
	Attempt   int           `json:"attempt"`
	At        time.Time     `json:"at"`                  // when Tick acts: the due time, or the next check while held
	HeldSince time.Time     `json:"held_since,omitzero"` // the first due check that found the session blocked
	Gap       time.Duration `json:"gap,omitempty"`       // the current gap between checks while held
	Paused    bool          `json:"paused,omitempty"`    // held by Settings.Paused
	// Backlog: it answers a dead turn written while nudge was not running;
	// if the records read after it show the session went on, it is told.
	Backlog bool `json:"backlog,omitempty"`
}

// Sent is the last continuation issued.
type Sent struct {
	For      Purpose   `json:"for"`
	Attempt  int       `json:"attempt"`
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
	Episode  string    `json:"episode"`            // the ID of the episode or usage limit it answers
	Reported bool      `json:"reported,omitempty"` // Delivered was called for it
	Echoed   bool      `json:"echoed,omitempty"`   // its user message was seen
	// Overtaken is set when the session moved on (a person typed, the turn
	// completed, another failure ended the episode).
	Overtaken bool `json:"overtaken,omitempty"`
}

// Session is the retry state of one session. Its exported fields are its
// whole state: it survives a JSON round trip (SPEC §7). It is not safe for
// concurrent use.
type Session struct {
	Key         Key       `json:"key"`
	Dir         string    `json:"project,omitempty"` // the session's working directory
	Current     State     `json:"state,omitempty"`   // empty until the first event
	Until       time.Time `json:"until,omitzero"`
	StateNote   string    `json:"note,omitempty"`
	Retry       *Episode  `json:"episode,omitempty"` // the provider-error episode
	Limit       *Limit    `json:"limit,omitempty"`
	Pending     *Pending  `json:"pending,omitempty"`
	Sent        *Sent     `json:"sent,omitempty"`
	BoxOpen     bool      `json:"box_open,omitempty"`
	BoxName     string    `json:"box_name,omitempty"`
	AgentStatus string    `json:"agent_status,omitempty"` // last known registry status; empty: no registry info
	// LastContinuedReset is the reset time nudge last continued after: it
	// continues at most once per reset.
	LastContinuedReset time.Time `json:"last_continued_reset,omitzero"`
	// ToldReset is the reset time of the last usage limit told, until a
	// person's message or the end of a turn other than by this limit: the
	// same limit shown again after the agent's own work (the turn it
	// killed) is not told again (docs/behaviour.md §5).
	ToldReset time.Time `json:"told_reset,omitzero"`
	// TurnEnded: the current turn ended (done or failed) and no new one
	// started since; EndedTurn is the ID of that ending when it names its
	// turn (classify.Event.TurnScoped).
	TurnEnded bool   `json:"turn_ended,omitempty"`
	EndedTurn string `json:"ended_turn,omitempty"`

	out     []Action
	backlog bool // the event being observed was written while nudge was not running
}

// NewSession starts the state of the session named key.
func NewSession(key Key) *Session { return &Session{Key: key} }

// UnmarshalJSON restores a stored session. A pending continuation whose
// episode or usage limit is missing from damaged data is dropped, so a bad
// row cannot make the machine fail later.
func (s *Session) UnmarshalJSON(b []byte) error {
	type stored Session
	var v stored
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("restore retry state: %w", err)
	}
	*s = Session(v)
	if p := s.Pending; p != nil {
		ok := p.For == ForRetry && s.Retry != nil || p.For == ForUsageLimit && s.Limit != nil
		if !ok {
			s.Pending = nil
		}
	}
	return nil
}

// State returns the session's state and its Until.
func (s *Session) State() (State, time.Time) { return s.Current, s.Until }

// Note returns the short explanation of the current state.
func (s *Session) Note() string { return s.StateNote }

// Episode names the episode (or usage limit) that the last issued
// continuation answers: with its attempt number it identifies the attempt
// in the ledger. Empty when nothing was issued.
func (s *Session) Episode() string {
	if s.Sent == nil {
		return ""
	}
	return s.Sent.Episode
}

// NextWake returns when the machine next needs a Tick, if ever: the daemon
// arms its timer with it after restoring the session.
func (s *Session) NextWake() (time.Time, bool) {
	if p := s.Pending; p != nil && !p.Paused {
		return p.At, true
	}
	return time.Time{}, false
}

// Project returns the session's working directory, as last reported.
func (s *Session) Project() string { return s.Dir }

// Repeats tells whether ev only repeats what the session knows already: the
// end of a turn that has ended. An ending that names its turn repeats the
// ending of the same turn; one that does not, read by a reader that began in
// the middle of its file before it read the start of any turn (fresh: after
// a restart, Claude Code's second record ending a turn), repeats whatever
// ending came before. The daemon neither stores nor observes such an event.
func (s *Session) Repeats(ev classify.Event, fresh bool) bool {
	switch {
	case ev.Kind != classify.TurnDone || !s.TurnEnded:
		return false
	case ev.TurnScoped():
		return ev.ID == s.EndedTurn
	}
	return fresh
}

// Observe takes one new event from the session's records, detected at now.
func (s *Session) Observe(ev classify.Event, now time.Time, set Settings) []Action {
	s.observe(ev, now, set.normalized())
	return s.flush()
}

// ObserveBacklog takes one event written while nudge was not running (read
// by the first scan after a start; docs/durability.md). A dead turn among
// them is told as usual, except a provider error: it is retried only when
// its record is at most BacklogRecent old and the records after it do not
// show the session going on; otherwise it gets one Inbox entry instead.
func (s *Session) ObserveBacklog(ev classify.Event, now time.Time, set Settings) []Action {
	p, e := s.Pending, s.Retry
	s.backlog = true
	s.observe(ev, now, set.normalized())
	s.backlog = false
	if p != nil && p.Backlog && s.Pending != p && e != nil && !e.Over {
		s.decide("the session went on while nudge was not running: the dead turn is told, not retried")
		s.entry("the turn failed with a provider error while nudge was not running; the session went on since, so it was not retried", e.Original, latest(e), e.Attempts)
		if s.Current == Retrying {
			s.show(Failed, time.Time{}, "")
		}
	}
	return s.flush()
}

// Restored looks at the session after a start: a continuation that fell due
// more than BacklogRecent ago, while nudge was not running, is not sent so
// late; it is told.
func (s *Session) Restored(now time.Time, set Settings) []Action {
	if p := s.Pending; p != nil && !p.Paused && now.Sub(p.At) > BacklogRecent {
		s.tell(advice.Undelivered(s.Key.Agent, advice.Why{Cause: advice.TooLate, Due: p.At}), p.For, s.attempts(p.For))
	}
	return s.flush()
}

func (s *Session) observe(ev classify.Event, now time.Time, set Settings) {
	if ev.Project != "" {
		s.Dir = ev.Project
	}
	switch ev.Kind {
	case classify.TurnDone, classify.TurnFailed:
		s.TurnEnded, s.EndedTurn = true, ""
		if ev.TurnScoped() {
			s.EndedTurn = ev.ID
		}
	case classify.TurnStarted, classify.UserMessage:
		s.TurnEnded, s.EndedTurn = false, ""
	}
	if ev.Process == nil && (ev.Kind == classify.UserMessage || ev.Kind == classify.TurnStarted) && s.AgentStatus == classify.StatusExited {
		// A new turn after the process was gone: a process (a resumed
		// session) writes the session again; whether it is idle is unknown.
		s.AgentStatus = ""
	}
	s.observeProcess(ev)
	switch ev.Kind {
	case classify.TurnFailed:
		s.deadTurn(ev, now, set)
	case classify.UsageLimited:
		f := classify.Failure{Class: classify.UsageLimit}
		if ev.Failure != nil {
			f = *ev.Failure
		}
		s.usageLimit(f, ev.AutoContinue, false, now, set)
	case classify.UserMessage:
		s.userMessage(ev, now, set)
	case classify.TurnStarted, classify.AgentActivity, classify.AgentRetrying:
		s.agentWorking(ev)
	case classify.TurnDone:
		s.turnDone()
	case classify.BoxOpened:
		s.BoxOpen = true
		if ev.Box != "" {
			s.BoxName = ev.Box
		}
	case classify.BoxClosed:
		s.BoxOpen, s.BoxName = false, ""
		if ev.Process == nil && s.AgentStatus == classify.StatusWaiting {
			s.AgentStatus = ""
		}
		s.unblocked(now, set)
	case classify.AgentIdle:
		if ev.Process == nil || ev.Process.Status == "" {
			s.AgentStatus = classify.StatusIdle
		}
		s.unblocked(now, set)
	}
}

// Tick acts on a Wake that came due. The daemon has just re-read the
// session's records (SPEC §3 step 2), so the picture is current.
func (s *Session) Tick(now time.Time, set Settings) []Action {
	set = set.normalized()
	p := s.Pending
	switch {
	case p == nil:
	case now.Before(p.At):
		s.wake(p.At)
	case set.Paused:
		if !p.Paused {
			p.Paused = true
			s.decide("paused: attempt %d waits until nudge is unpaused", p.Attempt)
			s.showPending(set)
		}
	case p.For == ForRetry && !set.Enabled:
		s.retryOff()
	case p.For == ForUsageLimit && !set.ContinueAfterUsageLimit:
		s.limitOff()
	case s.AgentStatus == classify.StatusExited:
		s.tell(advice.Undelivered(s.Key.Agent, advice.Why{Cause: advice.Gone}), p.For, s.attempts(p.For))
	default:
		if b, ok := s.blocker(); ok {
			s.hold(b, now, set)
		} else {
			s.inject(now, set)
		}
	}
	return s.flush()
}

// Delivered takes the outcome of the Inject for attempt: err is nil when the
// continuation was typed, else why it could not be (an advice.Why; any other
// error is a terminal that refused the keys).
func (s *Session) Delivered(attempt int, err error, now time.Time, set Settings) []Action {
	c := s.Sent
	switch {
	case c == nil || c.Attempt != attempt || c.Reported:
		s.decide("delivery report for attempt %d ignored: no such continuation is outstanding", attempt)
	case !s.current(c):
		c.Reported = true
		s.decide("attempt %d: delivery reported after the session moved on; nothing to do", attempt)
	case err != nil:
		c.Reported = true
		s.tell(advice.Undelivered(s.Key.Agent, advice.WhyOf(err)), c.For, attempt)
	default:
		c.Reported = true
		s.decide("attempt %d delivered; waiting for its turn to end", attempt)
		s.show(Working, time.Time{}, sentNote(c, set.normalized()))
	}
	return s.flush()
}

// Interrupted takes the outcome of attempt when a stop cut it while it was
// being typed: its text may sit unsent in the agent's prompt, so the person
// is told whatever the session did since (why says where), and the retry
// of that dead turn is over: nothing is typed over it.
func (s *Session) Interrupted(attempt int, why advice.Why, now time.Time, set Settings) []Action {
	what := advice.Undelivered(s.Key.Agent, why)
	c := s.Sent
	if c != nil && c.Attempt == attempt && !c.Reported && s.current(c) {
		c.Reported = true
		s.tell(what, c.For, attempt)
		return s.flush()
	}
	if c != nil && c.Attempt == attempt {
		c.Reported = true
	}
	s.decide("attempt %d was cut while typing, after the session moved on: telling the person", attempt)
	var f classify.Failure
	s.entry(what, f, nil, attempt)
	s.notify(s.agentTitle()+" needs attention", what, f)
	return s.flush()
}

// Reconfigure applies changed settings at once: switching retry off cancels
// a pending retry (its dead turn gets its one Inbox entry); switching it on
// does not bring back old failures.
func (s *Session) Reconfigure(now time.Time, set Settings) []Action {
	set = set.normalized()
	if p := s.Pending; p != nil {
		switch {
		case p.For == ForRetry && !set.Enabled:
			s.retryOff()
		case p.For == ForUsageLimit && !set.ContinueAfterUsageLimit:
			s.limitOff()
		case set.Paused && !p.Paused:
			p.Paused = true
			s.decide("paused: attempt %d waits until nudge is unpaused", p.Attempt)
			s.showPending(set)
		case !set.Paused && p.Paused:
			p.Paused, p.At = false, maxTime(now, p.At)
			s.decide("unpaused: attempt %d is re-checked at %s", p.Attempt, stamp(p.At))
			s.showPending(set)
			s.wake(p.At)
		}
	} else if set.ContinueAfterUsageLimit && s.Limit != nil && !s.Limit.Fired {
		s.planLimit(set)
		s.showLimit()
	}
	return s.flush()
}

// observeProcess records what a live-registry event says about the agent
// process. A status older than the episode's dead turn is stale.
func (s *Session) observeProcess(ev classify.Event) {
	p := ev.Process
	if p == nil || p.Status == "" {
		return
	}
	if e := s.Retry; e != nil && !ev.Time.IsZero() && ev.Time.Before(e.FailedAt) {
		s.decide("registry status %q is older than the dead turn; ignored", p.Status)
		return
	}
	s.AgentStatus = p.Status
	if p.Waiting != "" {
		s.BoxName = p.Waiting
	}
	pend := s.Pending
	if pend == nil {
		if p.Status == classify.StatusExited && s.Current == Working {
			s.crashed()
		}
		return
	}
	switch p.Status {
	case classify.StatusExited:
		s.tell(advice.Undelivered(s.Key.Agent, advice.Why{Cause: advice.Gone}), pend.For, s.attempts(pend.For))
	case classify.StatusBusy:
		s.Pending = nil
		s.decide("the agent's registry says it is busy: pending attempt %d cancelled", pend.Attempt)
		s.Limit = nil
		s.show(Working, time.Time{}, "")
	}
}

// crashed handles an agent process that went away with its turn still open:
// nothing recorded why, so it is told once as unknown and never retried
// (claude.md §6: "that is a crash: report it, do not retry").
func (s *Session) crashed() {
	s.endEpisode("the agent process exited mid-turn")
	s.decide("the agent process exited with its turn open: told once, not retried")
	f := classify.Failure{Class: classify.Unknown, Message: "the agent process exited while its turn was still open; it recorded no error"}
	s.entry("the agent stopped in the middle of a turn; not retried", f, nil, 0)
	s.show(Failed, time.Time{}, "stopped mid-turn")
}

// deadTurn handles a TurnFailed event.
func (s *Session) deadTurn(ev classify.Event, now time.Time, set Settings) {
	f := classify.Failure{Class: classify.Unknown}
	if ev.Failure != nil {
		f = *ev.Failure
	}
	attempts := s.attempts(ForRetry)
	switch f.Class {
	case classify.ProviderError:
		s.providerError(f, ev.Time, now, set)
	case classify.UsageLimit:
		s.usageLimit(f, ev.AutoContinue, true, now, set)
	case classify.Cancelled:
		s.endEpisode("the person interrupted the turn")
		s.show(Cancelled, time.Time{}, "")
	case classify.Auth:
		s.endEpisode("sign-in failed")
		what := advice.SignIn(s.Key.Agent, f.Hint)
		s.entry(what, f, nil, attempts)
		s.notify(s.agentTitle()+" needs sign-in", what, f)
		s.show(NeedsSignIn, time.Time{}, what)
	case classify.Rejected:
		s.endEpisode("the provider refused the request")
		s.entry("the provider refused the request; not retried", f, nil, attempts)
		s.show(Failed, time.Time{}, "")
	default:
		s.endEpisode("unrecognised error")
		s.entry("the turn failed with an error nudge does not recognise; not retried", f, nil, attempts)
		s.show(Failed, time.Time{}, "")
	}
}

// providerError handles a dead turn classified provider_error (SPEC §3).
func (s *Session) providerError(f classify.Failure, recorded, now time.Time, set Settings) {
	if s.rateLimited(now) {
		s.decide("provider error while the usage limit is in force: not retried (the retry yields to the limit, SPEC §5)")
		s.entry("the turn failed with a provider error during a usage limit; not retried", f, nil, 0)
		return
	}
	s.Limit = nil
	if !set.Enabled {
		if p := s.Pending; p != nil && p.For == ForRetry {
			s.retryOff()
		}
		s.Retry = nil
		s.decide("retry is off: one Inbox entry, no continuation")
		s.entry("the turn failed with a provider error; retry is off", f, nil, 0)
		s.show(Failed, time.Time{}, "")
		return
	}
	if s.backlog && s.Pending == nil && (recorded.IsZero() || now.Sub(recorded) > BacklogRecent) {
		s.overtake()
		s.decide("provider error written while nudge was not running, more than %s ago: told, not retried", short(BacklogRecent))
		s.entry("the turn failed with a provider error while nudge was not running; too long ago to retry", f, nil, 0)
		s.show(Failed, time.Time{}, "")
		return
	}
	e := s.Retry
	if e == nil {
		first := recorded
		if first.IsZero() {
			first = now
		}
		e = &Episode{ID: "retry " + first.UTC().Format(time.RFC3339Nano), Original: f}
		s.Retry = e
	}
	e.Latest, e.FailedAt = f, recorded
	if e.Over {
		s.decide("provider error after nudge gave up on this episode: no more attempts")
		s.entry("the turn failed again after nudge gave up; not retried", f, nil, e.Attempts)
		return
	}
	if p := s.Pending; p != nil {
		s.decide("another provider error while attempt %d is pending: keeping its time", p.Attempt)
		return
	}
	if e.Attempts >= len(set.Delays) {
		last := ""
		if l := latest(e); l != nil {
			last = l.Message
		}
		s.tell(advice.GaveUp(s.Key.Agent, e.Attempts, last), ForRetry, e.Attempts)
		return
	}
	delay := set.Delays[e.Attempts]
	s.Pending = &Pending{For: ForRetry, Attempt: e.Attempts + 1, At: now.Add(delay), Backlog: s.backlog}
	s.step(StepScheduled, "provider error: attempt %d of %d in %s", e.Attempts+1, len(set.Delays), short(delay))
	s.showPending(set)
	s.wake(s.Pending.At)
}

// usageLimit handles a usage limit, from a dead turn or from the agent's
// own report that it waits (SPEC §5). A limit gets one Inbox entry in
// whatever order its signs come (docs/behaviour.md §5): a sign of it is the
// limit already told when that limit still stands (no work and no
// continuation since; for a dead turn, its reset not passed either), or
// when, after only the agent's own work, it names the reset time of the
// last limit told, that reset is still ahead and nudge has not continued
// after it. A person's message starts afresh. A dead turn that comes after
// the limit was told keeps its error text in the timeline and in the
// limit. No notification: nothing is broken and nobody can act before the
// reset, and the menu shows "usage limit until T".
func (s *Session) usageLimit(f classify.Failure, auto, deadTurn bool, now time.Time, set Settings) {
	if p := s.Pending; p != nil && p.For == ForRetry {
		s.Pending = nil
		s.decide("usage limit: pending attempt %d cancelled (the retry yields to the limit, SPEC §5)", p.Attempt)
	}
	if s.Retry != nil {
		s.Retry = nil
		if s.Sent != nil {
			s.Sent.Overtaken = true
		}
	}
	l := s.Limit
	standing := l != nil && !l.Fired && (!deadTurn || s.rateLimited(now))
	told := !f.ResetAt.IsZero() && f.ResetAt.Equal(s.ToldReset) && now.Before(f.ResetAt) && s.LastContinuedReset.Before(f.ResetAt)
	if !standing {
		l = &Limit{}
		s.Limit = l
	}
	before := *l
	switch {
	case !standing:
		*l = Limit{Failure: f, AutoContinue: auto}
	case deadTurn:
		l.Failure = f
		if f.ResetAt.IsZero() {
			l.Failure.ResetAt = before.Failure.ResetAt
		}
	case !f.ResetAt.IsZero():
		l.Failure.ResetAt = f.ResetAt
	}
	l.AutoContinue = l.AutoContinue || auto
	fresh := !standing && !told
	switch {
	case fresh:
	case deadTurn:
		s.decide("usage limit already told: the dead turn is the same limit, not told again (its error: %q)", f.Message)
	case !standing:
		s.decide("usage limit already told: the agent reports the same limit again")
	}
	if !standing || before.AutoContinue != l.AutoContinue || !before.Failure.ResetAt.Equal(l.Failure.ResetAt) {
		s.planLimit(set)
	}
	if fresh {
		s.entry(s.limitWords(), l.Failure, nil, 0)
		s.ToldReset = f.ResetAt
	}
	s.showLimit()
}

// planLimit schedules the one "Continue after usage limit" continuation,
// never before the agent's own reset time plus the margin, never on a
// guessed time.
func (s *Session) planLimit(set Settings) {
	l := s.Limit
	reset := l.Failure.ResetAt
	switch {
	case l.Fired:
	case !set.ContinueAfterUsageLimit:
		s.decide("usage limit: continue after usage limit is off; nothing will be sent")
	case reset.IsZero():
		s.decide("usage limit without a reset time: nudge never guesses one; nothing will be sent")
	case !reset.After(s.LastContinuedReset):
		s.decide("usage limit: nudge already continued once after the reset at %s", stamp(reset))
	default:
		margin, why := set.UsageLimitMargin, ""
		if l.AutoContinue {
			margin, why = set.UsageLimitMarginAutoContinue, ", leaving the agent's own auto-continue its chance"
		}
		at := reset.Add(margin)
		if p := s.Pending; p != nil && p.At.Equal(at) {
			return
		}
		s.Pending = &Pending{For: ForUsageLimit, Attempt: 1, At: at}
		s.step(StepScheduled, "usage limit: one continuation at %s (reset + %s%s)", stamp(at), short(margin), why)
		s.wake(at)
	}
}

// userMessage tells nudge's own continuation from a person typing.
func (s *Session) userMessage(ev classify.Event, now time.Time, set Settings) {
	if c := s.Sent; c != nil && !c.Echoed && !now.After(c.At.Add(EchoWindow)) && sameText(ev.Text, c.Text) {
		c.Echoed = true
		s.decide("user message is nudge's own attempt %d: its turn started", c.Attempt)
		s.show(Working, time.Time{}, sentNote(c, set))
		return
	}
	s.endEpisode("the person typed a message")
	s.show(Working, time.Time{}, "")
}

// agentWorking handles signs that the agent is on a turn: a pending
// continuation is cancelled, the attempt count is kept. Signs older than
// the episode's dead turn are stale.
func (s *Session) agentWorking(ev classify.Event) {
	if e := s.Retry; e != nil && s.Pending != nil && !ev.Time.IsZero() && ev.Time.Before(e.FailedAt) {
		s.decide("%s recorded before the dead turn; ignored", ev.Kind)
		return
	}
	if p := s.Pending; p != nil {
		s.Pending = nil
		s.decide("the agent is working (%s): pending attempt %d cancelled", ev.Kind, p.Attempt)
	}
	if s.Limit != nil && !s.Limit.Fired {
		s.Limit = nil
	}
	note := ""
	if ev.Kind == classify.AgentRetrying {
		note = "the agent is retrying by itself"
	}
	s.show(Working, time.Time{}, note)
}

// turnDone resets everything: a completed turn ends the episode (SPEC §3
// step 4); after nudge's continuation, the session recovered.
func (s *Session) turnDone() {
	switch c := s.Sent; {
	case c != nil && s.current(c):
		s.step(StepRecovered, "turn completed after continuation %d: recovered", c.Attempt)
	case s.Retry != nil || s.Pending != nil || s.Limit != nil:
		s.decide("turn completed: attempt counter reset")
	}
	s.overtake()
	s.show(Finished, time.Time{}, "")
}

// endEpisode ends the episode, the usage limit and any pending continuation
// because something else took over, saying so when there was one.
func (s *Session) endEpisode(why string) {
	switch {
	case s.Pending != nil:
		s.decide("%s: pending attempt %d cancelled", why, s.Pending.Attempt)
	case s.Retry != nil && !s.Retry.Over:
		s.decide("%s: retry episode over, attempt counter reset", why)
	}
	s.overtake()
}

// overtake forgets the episode, the usage limit (and that it was told) and
// any pending continuation: the session moved on, so a late delivery report
// of the last continuation is no longer news.
func (s *Session) overtake() {
	s.Retry, s.Pending, s.Limit, s.ToldReset = nil, nil, nil, time.Time{}
	if s.Sent != nil {
		s.Sent.Overtaken = true
	}
}

// unblocked retries promptly when the box that held a due continuation
// closed or the agent came back to idle.
func (s *Session) unblocked(now time.Time, set Settings) {
	p := s.Pending
	if p == nil || p.HeldSince.IsZero() || p.Paused {
		return
	}
	if _, blocked := s.blocker(); blocked {
		return
	}
	p.HeldSince, p.Gap, p.At = time.Time{}, 0, now
	s.decide("nothing holds attempt %d any more: checking again now", p.Attempt)
	s.showPending(set)
	s.wake(now)
}

// blocker says what keeps a due continuation from being typed: an open box
// (SPEC §3 "Never while a question or permission box is open") or an agent
// that is not idle. No registry information at all is not a blocker: the
// inject layer verifies the target again.
func (s *Session) blocker() (blocker, bool) {
	switch {
	case s.BoxOpen || s.AgentStatus == classify.StatusWaiting:
		b := blocker{is: "a box is open", cause: advice.BoxOpen, box: s.BoxName, state: WaitingBox}
		if s.BoxName != "" {
			b.detail = " (" + s.BoxName + ")"
		}
		return b, true
	case s.AgentStatus != "" && s.AgentStatus != classify.StatusIdle:
		return blocker{is: "the agent is not idle", cause: advice.Busy,
			detail: fmt.Sprintf(" (status %q)", s.AgentStatus), state: Retrying}, true
	}
	return blocker{}, false
}

// blocker is what holds a due continuation, in words for the person.
type blocker struct {
	is, detail string
	cause      advice.Cause // what the person is told when nudge gives up
	box        string
	state      State
}

// hold postpones a due continuation while something blocks it: checks after
// BoxFirstCheck, doubling up to BoxMaxGap; after BoxGiveUp nudge gives up
// and tells the person (SPEC §3).
func (s *Session) hold(b blocker, now time.Time, set Settings) {
	p := s.Pending
	if p.HeldSince.IsZero() {
		p.HeldSince, p.Gap = now, set.BoxFirstCheck
	} else {
		p.Gap = min(2*p.Gap, set.BoxMaxGap)
	}
	giveUp := p.HeldSince.Add(set.BoxGiveUp)
	if !now.Before(giveUp) {
		s.tell(advice.Undelivered(s.Key.Agent, advice.Why{Cause: b.cause, Box: b.box, For: set.BoxGiveUp}), p.For, s.attempts(p.For))
		return
	}
	p.At = minTime(now.Add(p.Gap), giveUp)
	s.decide("attempt %d is due but %s%s: next check at %s", p.Attempt, b.is, b.detail, stamp(p.At))
	s.show(b.state, p.At, b.is+b.detail)
	s.wake(p.At)
}

// inject issues the pending continuation. It counts as used from here on:
// whatever happens next, it is never issued again.
func (s *Session) inject(now time.Time, set Settings) {
	p := s.Pending
	s.Pending = nil
	episode := ""
	switch p.For {
	case ForRetry:
		s.Retry.Attempts = p.Attempt
		episode = s.Retry.ID
	case ForUsageLimit:
		s.Limit.Fired = true
		s.LastContinuedReset = s.Limit.Failure.ResetAt
		episode = "usage_limit " + s.LastContinuedReset.UTC().Format(time.RFC3339)
	}
	s.Sent = &Sent{For: p.For, Attempt: p.Attempt, Episode: episode, Text: set.Message, At: now}
	s.decide("sending attempt %d (%s): nothing holds it", p.Attempt, p.For)
	s.emit(Inject{Key: s.Key, Attempt: p.Attempt, Text: set.Message})
}

// retryOff cancels the pending retry because retry was switched off; its
// dead turn gets its one Inbox entry (SPEC §4).
func (s *Session) retryOff() {
	e := s.Retry
	s.decide("retry is off: pending attempt %d cancelled", s.Pending.Attempt)
	s.Pending, s.Retry = nil, nil
	s.entry("the turn failed with a provider error; retry is off", e.Original, latest(e), e.Attempts)
	s.show(Failed, time.Time{}, "")
}

// limitOff cancels the pending usage-limit continuation.
func (s *Session) limitOff() {
	s.Pending = nil
	s.decide("continue after usage limit is off: the continuation is cancelled")
	s.showLimit()
}

// tell stops the automation for purpose and tells the person what (an
// advice text): one Inbox entry, one notification, state GaveUp (SPEC §3:
// "Never a silent give-up").
func (s *Session) tell(what string, purpose Purpose, attempts int) {
	s.Pending = nil
	var f classify.Failure
	var last *classify.Failure
	switch {
	case purpose == ForRetry && s.Retry != nil:
		s.Retry.Over = true
		f, last = s.Retry.Original, latest(s.Retry)
	case purpose == ForUsageLimit && s.Limit != nil:
		s.Limit.Fired = true
		f = s.Limit.Failure
	}
	s.entry(what, f, last, attempts)
	s.notify(s.agentTitle()+" needs attention", what, f)
	s.show(GaveUp, time.Time{}, what)
}

// current tells whether the continuation c still belongs to the session's
// present episode or limit.
func (s *Session) current(c *Sent) bool {
	switch {
	case c.Overtaken:
		return false
	case c.For == ForUsageLimit:
		return s.Limit != nil && s.Limit.Fired
	}
	return s.Retry != nil && !s.Retry.Over && s.Retry.Attempts == c.Attempt
}

// attempts is how many continuations purpose has issued so far.
func (s *Session) attempts(purpose Purpose) int {
	if purpose == ForRetry && s.Retry != nil {
		return s.Retry.Attempts
	}
	return 0
}

// rateLimited tells whether a usage limit is in force: its reset time has
// not passed (or is unknown), or nudge's continuation after it is pending.
func (s *Session) rateLimited(now time.Time) bool {
	l := s.Limit
	if l == nil {
		return false
	}
	if p := s.Pending; p != nil && p.For == ForUsageLimit {
		return true
	}
	return l.Failure.ResetAt.IsZero() || now.Before(l.Failure.ResetAt)
}

// showPending shows the state of the pending continuation.
func (s *Session) showPending(set Settings) {
	p := s.Pending
	if p.For == ForUsageLimit {
		s.showLimit()
		return
	}
	note := fmt.Sprintf("attempt %d", p.Attempt)
	if len(set.Delays) > 0 {
		note += fmt.Sprintf(" of %d", len(set.Delays))
	}
	if p.Paused {
		note += ", paused"
	}
	s.show(Retrying, p.At, note)
}

// showLimit shows "usage limit until <reset>", with what happens after.
func (s *Session) showLimit() {
	s.show(UsageLimit, s.Limit.Failure.ResetAt, s.limitWords())
}

// limitWords says the usage limit in force and what happens at its end.
func (s *Session) limitWords() string {
	l := advice.Limit{Reset: s.Limit.Failure.ResetAt, AgentContinues: s.Limit.AutoContinue}
	if p := s.Pending; p != nil && p.For == ForUsageLimit {
		l.ContinueAt, l.Paused = p.At, p.Paused
	}
	return advice.UsageLimit(s.Key.Agent, l)
}

// sentNote describes a continuation on its way.
func sentNote(c *Sent, set Settings) string {
	if c.For == ForUsageLimit {
		return "continued after the usage limit"
	}
	return fmt.Sprintf("continuation sent (attempt %d of %d)", c.Attempt, len(set.Delays))
}

// show reports a new state; an unchanged state is not reported again.
func (s *Session) show(st State, until time.Time, note string) {
	if s.Current == st && s.Until.Equal(until) && s.StateNote == note {
		return
	}
	s.Current, s.Until, s.StateNote = st, until, note
	s.emit(SetState{Key: s.Key, State: st, Until: until, Note: note})
}

// entry tells the person what in one Inbox entry, and says so in a decision.
func (s *Session) entry(what string, f classify.Failure, last *classify.Failure, attempts int) {
	s.step(StepTold, "told the person: %s", what)
	s.emit(Entry{Key: s.Key, Project: s.Dir, What: what, Failure: f, Latest: last, Attempts: attempts})
}

func (s *Session) notify(title, what string, f classify.Failure) {
	body := what
	if f.Message != "" && !strings.Contains(what, f.Message) {
		body += " — " + f.Message
	}
	if s.Dir != "" {
		body = s.Dir + ": " + body
	}
	s.emit(Notify{Key: s.Key, Project: s.Dir, Title: title, Body: body})
}

func (s *Session) decide(format string, args ...any) { s.step("", format, args...) }

// step records a decision that changes the session's course.
func (s *Session) step(step Step, format string, args ...any) {
	s.emit(Decision{Key: s.Key, What: fmt.Sprintf(format, args...), Step: step})
}

func (s *Session) wake(at time.Time) { s.emit(Wake{Key: s.Key, At: at}) }

func (s *Session) emit(a Action) { s.out = append(s.out, a) }

func (s *Session) flush() []Action {
	out := s.out
	s.out = nil
	return out
}

// agentTitle is the agent's name as people write it.
func (s *Session) agentTitle() string {
	if a, ok := classify.Lookup(s.Key.Agent); ok && a.Title != "" {
		return a.Title
	}
	return s.Key.Agent
}

// latest is the episode's latest error when its text differs from the original.
func latest(e *Episode) *classify.Failure {
	if e.Latest.Message == e.Original.Message {
		return nil
	}
	l := e.Latest
	return &l
}

// sameText compares two messages the way an agent may record typed text:
// trimmed, with runs of white space folded.
func sameText(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// stamp formats an instant for decisions and notes.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// short formats a duration without trailing zero units ("1h", "5m", "1m30s").
func short(d time.Duration) string {
	str := d.String()
	if strings.HasSuffix(str, "m0s") {
		str = strings.TrimSuffix(str, "0s")
	}
	if strings.HasSuffix(str, "h0m") {
		str = strings.TrimSuffix(str, "0m")
	}
	return str
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
