// Package outage decides provider outages (docs/behaviour.md §9): when the
// provider errors of several sessions are one event, which session probes
// the provider while the others wait, when the person is told, and how the
// waiting sessions are continued once the provider is back. Events and the
// time go in, decisions come out; it keeps no timer and opens nothing.
package outage

import (
	"slices"
	"time"

	"nudge/internal/classify"
	"nudge/internal/retry"
)

const (
	// Window is how close together the provider errors of two sessions on
	// one provider must be recorded to make an outage.
	Window = 2 * time.Minute
	// Spacing is the gap between the continuations of the waiting sessions
	// once the provider is back: never two in the same second.
	Spacing = 5 * time.Second
	// Recheck is the longest a waiting session goes without being looked
	// at again.
	Recheck = time.Minute
	// maxErrors bounds the distinct error texts an outage keeps.
	maxErrors = 5
)

// Outage is one provider's outage: its sessions, its errors and its course.
type Outage struct {
	Provider string    `json:"provider"`
	Start    time.Time `json:"start"`            // the first provider error of its sessions
	End      time.Time `json:"end,omitzero"`     // when it ended; zero while it lasts
	GaveUp   bool      `json:"gave_up,omitzero"` // it ended with every session given up
	Told     bool      `json:"told,omitzero"`    // the person was told it started
	Members  []Member  `json:"sessions"`
	Errors   []string  `json:"errors"` // distinct error texts, the first few
	Probe    retry.Key `json:"probe"`  // the session that spends attempts
}

// Member is one session of an outage.
type Member struct {
	Key       retry.Key `json:"key"`
	FailedAt  time.Time `json:"failed_at"`          // its first provider error in the outage
	Waiting   bool      `json:"waiting,omitzero"`   // an attempt came due and waits
	GaveUp    bool      `json:"gave_up,omitzero"`   // nudge gave up on it
	Left      bool      `json:"left,omitzero"`      // it went on without nudge (the person, another failure)
	Continued bool      `json:"continued,omitzero"` // continued when the provider came back
	Attempts  int       `json:"attempts,omitzero"`  // continuations sent during the outage
	// Released: the person asked for its waiting attempt to be sent
	// (Continue); it waits again after another failure.
	Released bool `json:"released,omitzero"`
}

// Key names the outage in the Inbox: its provider and start.
func (o *Outage) Key() string { return o.Provider + " " + o.Start.UTC().Format(time.RFC3339Nano) }

// Open tells whether the outage lasts.
func (o *Outage) Open() bool { return o.End.IsZero() }

// member is k's place among the members, or -1.
func (o *Outage) member(k retry.Key) int {
	return slices.IndexFunc(o.Members, func(m Member) bool { return m.Key == k })
}

// Waiting counts the members that wait for the provider.
func (o *Outage) Waiting() int {
	n := 0
	for _, m := range o.Members {
		if m.active() && m.Waiting {
			n++
		}
	}
	return n
}

// active tells a member nudge still acts on.
func (m Member) active() bool { return !m.GaveUp && !m.Left }

// Release is a waiting session's pending attempt made due at At, and why,
// in words for the session's timeline.
type Release struct {
	Key retry.Key
	At  time.Time
	Why string
}

// Change is what a call decided beyond its answer: the outages whose rows
// changed (to store), releases, and what to tell.
type Change struct {
	Changed  []*Outage
	Releases []Release
	// Started is an outage that has just begun to cost the person: tell it
	// once. Ended is a told outage that has just ended (the provider is
	// back, or every session was given up): tell that once.
	Started, Ended *Outage
}

func (c *Change) changed(o *Outage) {
	if !slices.Contains(c.Changed, o) {
		c.Changed = append(c.Changed, o)
	}
}

// failure is a provider error not (yet) part of an outage.
type failure struct {
	key   retry.Key
	first time.Time // the session's first error of the run
	last  time.Time // its latest
	text  string
}

// Tracker holds the open outages and the recent provider errors. It is not
// safe for concurrent use.
type Tracker struct {
	// Ladder is the whole wait of one session's retries (the sum of
	// retry.delays): an outage that has lasted longer costs the person,
	// since each session would have given up by then.
	Ladder time.Duration
	open   map[string]*Outage
	recent map[string][]failure
}

// New starts a tracker with the outages that were open when nudge last
// stopped.
func New(ladder time.Duration, open []*Outage) *Tracker {
	t := &Tracker{Ladder: ladder, open: map[string]*Outage{}, recent: map[string][]failure{}}
	for _, o := range open {
		if o.Open() {
			t.open[o.Provider] = o
		}
	}
	return t
}

// Outages are the open outages, oldest first.
func (t *Tracker) Outages() []*Outage {
	out := make([]*Outage, 0, len(t.open))
	for _, o := range t.open {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b *Outage) int { return a.Start.Compare(b.Start) })
	return out
}

// Of is the open outage k is an active member of, or nil.
func (t *Tracker) Of(k retry.Key) *Outage {
	for _, o := range t.open {
		if i := o.member(k); i >= 0 && o.Members[i].active() {
			return o
		}
	}
	return nil
}

// Failed takes a provider error of session k on provider, recorded at at
// with text. Two sessions' errors within Window make an outage; its probe
// is the session that failed first.
func (t *Tracker) Failed(k retry.Key, provider, text string, at time.Time) Change {
	var c Change
	if provider == "" {
		return c
	}
	if o := t.open[provider]; o != nil {
		i := o.member(k)
		if i < 0 {
			o.Members = append(o.Members, Member{Key: k, FailedAt: at})
		} else if !o.Members[i].active() {
			o.Members[i] = Member{Key: k, FailedAt: at}
		} else {
			o.Members[i].Released = false
		}
		o.addError(text)
		t.elect(o, at, &c)
		c.changed(o)
		return c
	}
	rs := slices.DeleteFunc(t.recent[provider], func(f failure) bool { return at.Sub(f.last) > Window })
	j := slices.IndexFunc(rs, func(f failure) bool { return f.key == k })
	if j < 0 {
		rs = append(rs, failure{key: k, first: at, last: at, text: text})
	} else {
		rs[j].last = at
	}
	t.recent[provider] = rs
	if len(rs) < 2 {
		return c
	}
	slices.SortStableFunc(rs, func(a, b failure) int { return a.first.Compare(b.first) })
	o := &Outage{Provider: provider, Start: rs[0].first, Probe: rs[0].key}
	for _, f := range rs {
		o.Members = append(o.Members, Member{Key: f.key, FailedAt: f.first})
		o.addError(f.text)
	}
	delete(t.recent, provider)
	t.open[provider] = o
	c.changed(o)
	return c
}

func (o *Outage) addError(text string) {
	if text != "" && len(o.Errors) < maxErrors && !slices.Contains(o.Errors, text) {
		o.Errors = append(o.Errors, text)
	}
}

// Due answers for session k, whose pending attempt has come due at now:
// wait says it must not be sent (the provider is out and another session
// probes it), with the outage and when to look again.
func (t *Tracker) Due(k retry.Key, now time.Time) (o *Outage, wait bool, next time.Time, c Change) {
	o = t.Of(k)
	if o == nil {
		return nil, false, time.Time{}, c
	}
	i := o.member(k)
	if o.Probe == k || o.Members[i].Released {
		t.cost(o, now, &c)
		return o, false, time.Time{}, c
	}
	if !o.Members[i].Waiting {
		o.Members[i].Waiting = true
		c.changed(o)
	}
	t.cost(o, now, &c)
	next = now.Add(Recheck)
	if costs := o.Start.Add(t.Ladder); !o.Told && costs.After(now) && costs.Before(next) {
		next = costs
	}
	return o, true, next, c
}

// cost tells the outage once it has lasted longer than a session's whole
// ladder: each session would have given up by then.
func (t *Tracker) cost(o *Outage, now time.Time, c *Change) {
	if !o.Told && !now.Before(o.Start.Add(t.Ladder)) {
		o.Told = true
		c.Started = o
		c.changed(o)
	}
}

// Done takes a completed turn of session k at now: the provider works, so
// an outage k is in ends, and its waiting sessions are continued, Spacing
// apart, in the order they failed.
func (t *Tracker) Done(k retry.Key, now time.Time) Change {
	var c Change
	t.forget(k)
	o := t.Of(k)
	if o == nil {
		return c
	}
	o.End = now
	delete(t.open, o.Provider)
	var waiting []int
	for i, m := range o.Members {
		if m.active() && m.Waiting && m.Key != k {
			waiting = append(waiting, i)
		}
	}
	slices.SortStableFunc(waiting, func(a, b int) int { return o.Members[a].FailedAt.Compare(o.Members[b].FailedAt) })
	for n, i := range waiting {
		o.Members[i].Continued = true
		c.Releases = append(c.Releases, Release{Key: o.Members[i].Key, At: now.Add(time.Duration(n) * Spacing),
			Why: classify.ProviderTitle(o.Provider) + " is back"})
	}
	if o.Told {
		c.Ended = o
	}
	c.changed(o)
	return c
}

// Left takes session k leaving nudge's care without a completed turn: it
// gave up (gaveUp), or it went on otherwise (the person typed, a failure of
// another class). When k probed, the next session becomes the probe; when
// none is left, the outage ends given up.
func (t *Tracker) Left(k retry.Key, gaveUp bool, now time.Time) Change {
	var c Change
	t.forget(k)
	o := t.Of(k)
	if o == nil {
		return c
	}
	i := o.member(k)
	o.Members[i].GaveUp, o.Members[i].Left = gaveUp, !gaveUp
	o.Members[i].Waiting = false
	c.changed(o)
	if gaveUp {
		t.cost(o, now, &c)
	}
	t.elect(o, now, &c)
	return c
}

// elect makes sure an active member probes: the one that failed first. A
// new probe that waits is released at once. With no active member left,
// the outage ends given up.
func (t *Tracker) elect(o *Outage, now time.Time, c *Change) {
	if i := o.member(o.Probe); i >= 0 && o.Members[i].active() {
		return
	}
	best := -1
	for i, m := range o.Members {
		if m.active() && (best < 0 || m.FailedAt.Before(o.Members[best].FailedAt)) {
			best = i
		}
	}
	if best < 0 {
		o.End, o.GaveUp = now, true
		delete(t.open, o.Provider)
		if o.Told {
			c.Ended = o
		}
		c.changed(o)
		return
	}
	m := &o.Members[best]
	o.Probe = m.Key
	if m.Waiting {
		m.Waiting = false
		c.Releases = append(c.Releases, Release{Key: m.Key, At: now, Why: "this session probes " + classify.ProviderTitle(o.Provider) + " now"})
	}
	c.changed(o)
}

// forget drops k's recent errors: its run of errors is over.
func (t *Tracker) forget(k retry.Key) {
	for p, rs := range t.recent {
		t.recent[p] = slices.DeleteFunc(rs, func(f failure) bool { return f.key == k })
	}
}

// Continue releases every waiting session of the open outages (of
// provider, when not ""), Spacing apart: the person asked for it
// (`nudge continue --all`). The outages go on.
func (t *Tracker) Continue(provider string, now time.Time) Change {
	var c Change
	n := 0
	for _, o := range t.Outages() {
		if provider != "" && o.Provider != provider {
			continue
		}
		for i := range o.Members {
			m := &o.Members[i]
			if m.active() && m.Waiting {
				m.Waiting, m.Released = false, true
				c.Releases = append(c.Releases, Release{Key: m.Key, At: now.Add(time.Duration(n) * Spacing), Why: "the person asked to continue the waiting sessions"})
				n++
			}
		}
		c.changed(o)
	}
	return c
}

// Sent counts a continuation sent to k.
func (t *Tracker) Sent(k retry.Key) Change {
	var c Change
	if o := t.Of(k); o != nil {
		o.Members[o.member(k)].Attempts++
		c.changed(o)
	}
	return c
}

// Clone is a deep copy of t, to go back to.
func (t *Tracker) Clone() *Tracker {
	c := &Tracker{Ladder: t.Ladder, open: make(map[string]*Outage, len(t.open)), recent: make(map[string][]failure, len(t.recent))}
	for p, o := range t.open {
		cp := *o
		cp.Members, cp.Errors = slices.Clone(o.Members), slices.Clone(o.Errors)
		c.open[p] = &cp
	}
	for p, rs := range t.recent {
		c.recent[p] = slices.Clone(rs)
	}
	return c
}

// Recent tells whether k had a provider error not yet part of an outage.
func (t *Tracker) Recent(k retry.Key) bool {
	for _, rs := range t.recent {
		for _, f := range rs {
			if f.key == k {
				return true
			}
		}
	}
	return false
}
