package retry

// The stored form of a Session: its versions, the migration from each, and
// the invariants a restored session must keep.

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// storedVersion is the version of the stored form this release writes.
const storedVersion = 1

// stored is the stored form of a Session, version 1. The episode, the
// usage limit and the continuations are stored as their own JSON: a change
// to one of them is a change of the stored form (testdata/stored pins it).
//
// Version 0 is every form stored before versions: the same fields without
// "v". The first releases also stored the dead turns they had handled
// ("seen", "last_untimed"), which are no longer kept; without "turn_ended"
// a session does not know its turn ended.
type stored struct {
	V                  int       `json:"v"`
	Key                Key       `json:"key"`
	Project            string    `json:"project,omitempty"`
	State              State     `json:"state,omitempty"`
	Until              time.Time `json:"until,omitzero"`
	Note               string    `json:"note,omitempty"`
	Episode            *episode  `json:"episode,omitempty"`
	Limit              *limit    `json:"limit,omitempty"`
	Pending            *pending  `json:"pending,omitempty"`
	Sent               *sent     `json:"sent,omitempty"`
	BoxOpen            bool      `json:"box_open,omitempty"`
	BoxName            string    `json:"box_name,omitempty"`
	AgentStatus        string    `json:"agent_status,omitempty"`
	LastContinuedReset time.Time `json:"last_continued_reset,omitzero"`
	ToldReset          time.Time `json:"told_reset,omitzero"`
	TurnEnded          bool      `json:"turn_ended,omitempty"`
	EndedTurn          string    `json:"ended_turn,omitempty"`
}

// MarshalJSON stores the session in the current stored form.
func (s *Session) MarshalJSON() ([]byte, error) {
	return json.Marshal(stored{
		V: storedVersion, Key: s.key, Project: s.project,
		State: s.state, Until: s.until, Note: s.note,
		Episode: s.episode, Limit: s.limit, Pending: s.pending, Sent: s.sent,
		BoxOpen: s.boxOpen, BoxName: s.boxName, AgentStatus: s.agentStatus,
		LastContinuedReset: s.lastContinuedReset, ToldReset: s.toldReset,
		TurnEnded: s.turnEnded, EndedTurn: s.endedTurn,
	})
}

// Clone returns a copy of s that shares nothing with it: what it stores
// (MarshalJSON), without the encoding, to put s back as it was.
func (s *Session) Clone() *Session {
	c := *s
	c.episode, c.limit, c.pending, c.sent = clone(s.episode), clone(s.limit), clone(s.pending), clone(s.sent)
	c.out, c.backlog = nil, false
	return &c
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// UnmarshalJSON restores a session stored by this release or an earlier
// one. A pending continuation that breaks the invariants (Session) is
// dropped, so a damaged row cannot make the machine fail later; a form
// that breaks any other is refused.
func (s *Session) UnmarshalJSON(b []byte) error {
	var v stored
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("restore retry state: %w", err)
	}
	if v.V < 0 || v.V > storedVersion {
		return fmt.Errorf("restore retry state: stored form version %d; this nudge reads 0 to %d", v.V, storedVersion)
	}
	// Version 0 has the fields of version 1: it needs no migration.
	r := Session{
		key: v.Key, project: v.Project,
		state: v.State, until: v.Until, note: v.Note,
		episode: v.Episode, limit: v.Limit, pending: v.Pending, sent: v.Sent,
		boxOpen: v.BoxOpen, boxName: v.BoxName, agentStatus: v.AgentStatus,
		lastContinuedReset: v.LastContinuedReset, toldReset: v.ToldReset,
		turnEnded: v.TurnEnded, endedTurn: v.EndedTurn,
	}
	if r.pendingBroken() != nil {
		r.pending = nil
	}
	if err := r.invariants(); err != nil {
		return fmt.Errorf("restore retry state: %w", err)
	}
	*s = r
	return nil
}

// invariants says which of the Session's invariants the state breaks, if any.
func (s *Session) invariants() error {
	switch e := s.episode; {
	case e != nil && (e.Attempts < 0 || e.Attempts > MaxAttempts):
		return fmt.Errorf("an episode with %d continuations", e.Attempts)
	case e != nil && s.limit != nil:
		return errors.New("both a provider-error episode and a usage limit")
	}
	if c := s.sent; c != nil && (!c.For.known() || c.Attempt < 1 || c.Attempt > MaxAttempts) {
		return fmt.Errorf("a continuation issued for %q as attempt %d", c.For, c.Attempt)
	}
	if !s.state.known() {
		return fmt.Errorf("the state %q", s.state)
	}
	if s.endedTurn != "" && !s.turnEnded {
		return errors.New("the ending of a turn that has not ended")
	}
	return s.pendingBroken()
}

// pendingBroken says which invariant the pending continuation breaks, if any.
func (s *Session) pendingBroken() error {
	p := s.pending
	if p == nil {
		return nil
	}
	switch {
	case p.For == forRetry && (s.episode == nil || s.episode.Over || p.Attempt != s.episode.Attempts+1 || p.Attempt > MaxAttempts):
		return fmt.Errorf("retry attempt %d pending without an episode that waits for it", p.Attempt)
	case p.For == forUsageLimit && (s.limit == nil || s.limit.Fired || p.Attempt != 1):
		return fmt.Errorf("usage-limit attempt %d pending without a limit that waits for it", p.Attempt)
	case !p.For.known():
		return fmt.Errorf("a continuation pending for %q", p.For)
	case p.At.IsZero():
		return errors.New("a pending continuation without a due time")
	case p.HeldSince.IsZero() && p.Gap != 0 || !p.HeldSince.IsZero() && p.Gap <= 0:
		return fmt.Errorf("a pending continuation held since %s with a gap of %s", stamp(p.HeldSince), p.Gap)
	}
	return nil
}
