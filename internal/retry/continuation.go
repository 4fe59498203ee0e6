package retry

// The one pending continuation: what holds it, how it is typed or given up,
// and whether the last one issued still answers the session.

import (
	"cmp"
	"fmt"
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
)

// purpose says what a continuation is for.
type purpose string

// The two automations that send a continuation.
const (
	forRetry      purpose = "retry"       // a provider error (docs/behaviour.md §3)
	forUsageLimit purpose = "usage_limit" // "Continue after usage limit" (docs/behaviour.md §5)
)

// known tells whether p is one of the two.
func (p purpose) known() bool { return p == forRetry || p == forUsageLimit }

// pending is the one continuation waiting to be sent.
type pending struct {
	For       purpose       `json:"for"`
	Attempt   int           `json:"attempt"`
	At        time.Time     `json:"at"`                  // when Tick acts: the due time, or the next check while held
	HeldSince time.Time     `json:"held_since,omitzero"` // the first due check that found the session blocked
	Gap       time.Duration `json:"gap,omitempty"`       // the current gap between checks while held
	Paused    bool          `json:"paused,omitempty"`    // held by Settings.Paused
	// ByPerson: held because the person is using the session's terminal
	// (a delivery came back held); the records cannot tell when that ends,
	// so only the next check does.
	ByPerson bool `json:"by_person,omitempty"`
	// Backlog: it answers a dead turn written while nudge was not running;
	// if the records read after it show the session went on, it is told.
	Backlog bool `json:"backlog,omitempty"`
}

// sent is the last continuation issued.
type sent struct {
	For      purpose   `json:"for"`
	Attempt  int       `json:"attempt"`
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
	Episode  string    `json:"episode"`            // the ID of the episode or usage limit it answers (Inject.Episode)
	Reported bool      `json:"reported,omitempty"` // Delivered was called for it
	Echoed   bool      `json:"echoed,omitempty"`   // its user message was seen
	// Overtaken is set when the session moved on (a person typed, the turn
	// completed, another failure ended the episode).
	Overtaken bool `json:"overtaken,omitempty"`
	// From is the pending continuation it was issued from, Before the
	// continuation issued before it and PrevReset the usage limit's reset
	// continued before: what a delivery that comes back held restores.
	// They are not stored: after a restart an outstanding delivery is
	// settled as interrupted (docs/durability.md).
	From      *pending  `json:"-"`
	Before    *sent     `json:"-"`
	PrevReset time.Time `json:"-"`
}

// unblocked retries promptly when the box that held a due continuation
// closed or the agent came back to idle.
func (s *Session) unblocked(now time.Time, set Settings) {
	p := s.pending
	if p == nil || p.HeldSince.IsZero() || p.Paused || p.ByPerson {
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
// (docs/behaviour.md §3 "Never while a question or permission box is open") or an agent
// that is not idle. No registry information at all is not a blocker: the
// inject layer verifies the target again.
func (s *Session) blocker() (blocker, bool) {
	switch {
	case s.boxOpen || s.agentStatus == classify.StatusWaiting:
		b := blocker{is: "a box is open", cause: advice.BoxOpen, box: s.boxName, state: WaitingBox}
		if s.boxName != "" {
			b.detail = " (" + s.boxName + ")"
		}
		return b, true
	case s.agentStatus != "" && s.agentStatus != classify.StatusIdle:
		return blocker{is: "the agent is not idle", cause: advice.Busy,
			detail: fmt.Sprintf(" (status %q)", s.agentStatus), state: Retrying}, true
	}
	return blocker{}, false
}

// blocker is what holds a due continuation, in words for the person.
type blocker struct {
	is, detail string
	cause      advice.Cause // what the person is told when nudge gives up
	box        string
	state      State
	note       string // the state's note, when not is+detail
	place      string // where the delivery was held, when one was
}

// hold postpones a due continuation while something blocks it: checks after
// BoxFirstCheck, doubling up to BoxMaxGap; after BoxGiveUp nudge gives up
// and tells the person (docs/behaviour.md §3).
func (s *Session) hold(b blocker, now time.Time, set Settings) {
	p := s.pending
	if p.HeldSince.IsZero() {
		p.HeldSince, p.Gap = now, set.BoxFirstCheck
	} else {
		p.Gap = min(2*p.Gap, set.BoxMaxGap)
	}
	giveUp := p.HeldSince.Add(set.BoxGiveUp)
	if !now.Before(giveUp) {
		s.tell(advice.Undelivered(s.key.Agent, advice.Why{Cause: b.cause, Box: b.box, Place: b.place, For: set.BoxGiveUp}), p.For, s.attempts(p.For))
		return
	}
	p.At = minTime(now.Add(p.Gap), giveUp)
	s.decide("attempt %d is due but %s%s: next check at %s", p.Attempt, b.is, b.detail, stamp(p.At))
	s.show(b.state, p.At, cmp.Or(b.note, b.is+b.detail))
	s.wake(p.At)
}

// unsend takes back continuation c, whose delivery came back held: nothing
// was typed, so it is not spent. It is pending again, held as for an open
// box (docs/behaviour.md §3 "The person at the keyboard").
func (s *Session) unsend(c *sent, why advice.Why, now time.Time, set Settings) {
	p := clone(c.From)
	s.sent = c.Before
	switch c.For {
	case forRetry:
		s.episode.Attempts = c.Attempt - 1
	case forUsageLimit:
		s.limit.Fired = false
		s.lastContinuedReset = c.PrevReset
	}
	s.pending = p
	p.ByPerson = true
	s.hold(blocker{is: heldIs(why.Cause), cause: why.Cause, state: WaitingYou, note: advice.Waiting(why.Cause), place: why.Place}, now, set)
}

// heldIs says what held a delivery, for the decision log.
func heldIs(c advice.Cause) string {
	switch c {
	case advice.Draft:
		return "the prompt holds text that is not nudge's"
	case advice.Leftover:
		return "the prompt holds nudge's earlier continuation, unsent"
	case advice.Present:
		return "a person is typing in the session's terminal"
	}
	return "the pane is in copy mode"
}

// inject issues the pending continuation. It counts as used from here on:
// whatever happens next, it is never issued again.
func (s *Session) inject(now time.Time, set Settings) {
	p := s.pending
	s.pending = nil
	answers, prevReset := "", time.Time{}
	switch p.For {
	case forRetry:
		s.episode.Attempts = p.Attempt
		answers = s.episode.ID
	case forUsageLimit:
		s.limit.Fired = true
		prevReset = s.lastContinuedReset
		s.lastContinuedReset = s.limit.Failure.ResetAt
		answers = "usage_limit " + s.lastContinuedReset.UTC().Format(time.RFC3339)
	}
	before := s.sent
	if before != nil {
		before = &sent{For: before.For, Attempt: before.Attempt, Text: before.Text, At: before.At, Episode: before.Episode,
			Reported: before.Reported, Echoed: before.Echoed, Overtaken: before.Overtaken}
	}
	s.sent = &sent{For: p.For, Attempt: p.Attempt, Episode: answers, Text: set.Message, At: now, From: p, Before: before, PrevReset: prevReset}
	s.decide("sending attempt %d (%s): nothing holds it", p.Attempt, p.For)
	s.emit(Inject{Key: s.key, Attempt: p.Attempt, Text: set.Message, Episode: answers})
}

// tell stops the automation for p and tells the person what (an
// advice text): one Inbox entry, one notification, state GaveUp (docs/behaviour.md §3:
// "Never a silent give-up").
func (s *Session) tell(what string, p purpose, attempts int) {
	s.pending = nil
	var f classify.Failure
	var last *classify.Failure
	switch {
	case p == forRetry && s.episode != nil:
		s.episode.Over = true
		f, last = s.episode.Original, latest(s.episode)
	case p == forUsageLimit && s.limit != nil:
		s.limit.Fired = true
		f = s.limit.Failure
	}
	s.needsAttention(what, f, last, attempts)
	s.show(GaveUp, time.Time{}, what)
}

// needsAttention tells the person what happened: an Inbox entry with the
// failure f (and the last one, when later) and a notification.
func (s *Session) needsAttention(what string, f classify.Failure, last *classify.Failure, attempts int) {
	s.entry(what, f, last, attempts)
	s.notify(advice.Title(s.key.Agent)+" needs attention", what, f)
}

// current tells whether the continuation c still belongs to the session's
// present episode or limit.
func (s *Session) current(c *sent) bool {
	switch {
	case c.Overtaken:
		return false
	case c.For == forUsageLimit:
		return s.limit != nil && s.limit.Fired
	}
	return s.episode != nil && !s.episode.Over && s.episode.Attempts == c.Attempt
}

// attempts is how many continuations p has issued so far.
func (s *Session) attempts(p purpose) int {
	if p == forRetry && s.episode != nil {
		return s.episode.Attempts
	}
	return 0
}

// showPending shows the state of the pending continuation.
func (s *Session) showPending(set Settings) {
	p := s.pending
	if p.For == forUsageLimit {
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

// sentNote describes a continuation on its way.
func sentNote(c *sent, set Settings) string {
	if c.For == forUsageLimit {
		return "continued after the usage limit"
	}
	return fmt.Sprintf("continuation sent (attempt %d of %d)", c.Attempt, len(set.Delays))
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
