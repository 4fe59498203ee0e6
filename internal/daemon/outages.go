package daemon

// Provider outages (docs/behaviour.md §9): the daemon feeds internal/outage
// the sessions' provider errors, completed turns and give-ups, holds a due
// attempt it says must wait, stores the outages with the step and tells
// them once.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"nudge/internal/classify"
	"nudge/internal/inbox"
	"nudge/internal/notify"
	"nudge/internal/outage"
	"nudge/internal/retry"
)

// tracker is the outages, kept as they were before st first changes them
// so that a step the store refuses can be undone.
func (d *Daemon) tracker(st *step) *outage.Tracker {
	if st.outages == nil {
		st.outages = d.outages.Clone()
	}
	d.outages.Ladder = ladder(d.settings)
	return d.outages
}

// ladder is the whole wait of one session's retries.
func ladder(set retry.Settings) time.Duration {
	var sum time.Duration
	for _, d := range set.Delays {
		sum += d
	}
	if len(set.Delays) == 0 {
		for _, d := range retry.DefaultSettings().Delays {
			sum += d
		}
	}
	return sum
}

// restoreOutages takes up the outages that lasted when nudge stopped.
func (d *Daemon) restoreOutages(ctx context.Context) error {
	rows, err := d.store.Outages(ctx, true)
	if err != nil {
		return err
	}
	var open []*outage.Outage
	for _, r := range rows {
		o := new(outage.Outage)
		if err := json.Unmarshal(r.Outage, o); err != nil {
			d.log.Warn("stored outage unreadable; left ended", "provider", r.Provider, "start", r.Start, "err", err)
			continue
		}
		open = append(open, o)
	}
	d.outages = outage.New(ladder(d.settings), open)
	return nil
}

// tick decides s's due attempt: it waits while another session probes its
// provider, else its machine decides as ever.
func (d *Daemon) tick(st *step, s *session, now time.Time) {
	if s.machine.RetryDue(now) {
		o, wait, next, ch := d.tracker(st).Due(s.key, now)
		d.outageChanged(st, ch, now)
		if wait {
			title := classify.ProviderTitle(o.Provider)
			d.act(st, s, now, func() []retry.Action { return s.machine.Await(title, next, d.settings) })
			return
		}
	}
	d.act(st, s, now, func() []retry.Action { return s.machine.Tick(now, d.settings) })
}

// providerFailed hands a provider error that the machine retries to the
// outages.
func (d *Daemon) providerFailed(st *step, s *session, ev classify.Event, now time.Time) {
	f := ev.Failure
	if ev.Kind != classify.TurnFailed || f == nil || f.Class != classify.ProviderError || !s.machine.RetryPending() {
		return
	}
	at := ev.Time
	if at.IsZero() {
		at = now
	}
	d.outageChanged(st, d.tracker(st).Failed(s.key, f.Provider, f.Excerpt(), at), now)
}

// followOutage learns from a machine's actions for s what its outage
// needs: a completed turn ends it, a give-up or another course takes s out
// of it, a continuation is counted. A session of a told outage that gives
// up is not notified on its own (its notices from first on are dropped):
// the outage's notifications tell it. One that gives up before the outage
// costs anything (its continuation could not be delivered) is told as
// ever.
func (d *Daemon) followOutage(st *step, s *session, acts []retry.Action, first int, now time.Time) {
	if d.outages.Of(s.key) == nil && !d.outages.Recent(s.key) {
		return
	}
	t := d.tracker(st)
	for _, a := range acts {
		switch a := a.(type) {
		case retry.Inject:
			d.outageChanged(st, t.Sent(s.key), now)
		case retry.SetState:
			switch a.State {
			case retry.Finished:
				d.outageChanged(st, t.Done(s.key, now), now)
			case retry.GaveUp:
				o := t.Of(s.key)
				ch := t.Left(s.key, true, now)
				if o != nil && o.Told {
					st.notices = st.notices[:first] // the outage's notification tells it
				}
				d.outageChanged(st, ch, now)
			case retry.Failed, retry.NeedsSignIn, retry.UsageLimit, retry.Cancelled:
				d.outageChanged(st, t.Left(s.key, false, now), now)
			}
		}
	}
}

// outageChanged stores the outages ch changed with st, makes the released
// sessions' attempts due, and tells what is to be told once st is stored.
func (d *Daemon) outageChanged(st *step, ch outage.Change, now time.Time) {
	for _, o := range ch.Changed {
		blob, err := json.Marshal(o)
		if err != nil {
			d.log.Error("encode outage", "provider", o.Provider, "err", err)
			continue
		}
		st.batch.Outages = append(st.batch.Outages, inbox.OutageRow{
			Provider: o.Provider, Start: o.Start, End: o.End, GaveUp: o.GaveUp, Sessions: len(o.Members), Outage: blob,
		})
	}
	for _, r := range ch.Releases {
		s, ok := d.sessions[r.Key]
		if !ok {
			continue
		}
		d.act(st, s, now, func() []retry.Action { return s.machine.Release(r.At, r.Why, d.settings) })
	}
	if o := ch.Started; o != nil {
		st.outageNotices = append(st.outageNotices, started(o))
		st.batch.Entries = append(st.batch.Entries, outageEntry(o, started(o).Title+": "+probing, now))
		st.say(func() {
			d.log.Info("outage told", "provider", o.Provider, "since", o.Start, "sessions", len(o.Members))
		})
	}
	if o := ch.Ended; o != nil {
		m := ended(o)
		st.outageNotices = append(st.outageNotices, m)
		what := m.Title
		if m.Body != "" {
			what += ": " + m.Body
		}
		st.batch.Entries = append(st.batch.Entries, outageEntry(o, what, now))
	}
	if len(ch.Changed) > 0 {
		st.outagesChanged = true
	}
}

// probing says what nudge does during an outage.
const probing = "nudge tries one session at a time and continues the others when it is back."

// started is the one notification of an outage that costs the person.
func started(o *outage.Outage) notify.Message {
	m := notify.Message{Title: fmt.Sprintf("%s failing since %s · %s waiting", classify.ProviderTitle(o.Provider),
		o.Start.Local().Format("15:04"), sessions(o.Waiting())), Body: probing}
	if len(o.Errors) > 0 {
		m.Body += " — " + o.Errors[0]
	}
	return m
}

// ended is the one notification of a told outage's end.
func ended(o *outage.Outage) notify.Message {
	title := classify.ProviderTitle(o.Provider)
	var continued int
	var need []string
	for _, m := range o.Members {
		switch {
		case m.GaveUp:
			need = append(need, shortID(m.Key.Session))
		case !m.Left:
			continued++
		}
	}
	if o.GaveUp {
		return notify.Message{Title: "nudge gave up on " + title, Urgent: true,
			Body: fmt.Sprintf("%s still fails; %s need you: type continue in each.", title, strings.Join(need, ", "))}
	}
	m := notify.Message{Title: fmt.Sprintf("%s is back; %s continued", title, sessions(continued))}
	if len(need) > 0 {
		m.Body = fmt.Sprintf("%s need you: nudge gave up on them during the outage.", strings.Join(need, ", "))
	}
	return m
}

func sessions(n int) string {
	if n == 1 {
		return "1 session"
	}
	return fmt.Sprintf("%d sessions", n)
}

// shortID is a session id as a notification names it: its first 8
// characters.
func shortID(id string) string {
	if r := []rune(id); len(r) > 8 {
		return string(r[:8])
	}
	return id
}

// ContinueAll sends the waiting attempts of the outages of provider
// (every provider when "") now, Spacing apart, each decided as any attempt
// (docs/behaviour.md §9); it says how many were released.
func (d *Daemon) ContinueAll(provider string) (int, error) {
	done := make(chan int, 1)
	f := func() {
		now := d.now()
		st := newStep()
		ch := d.tracker(st).Continue(provider, now)
		d.outageChanged(st, ch, now)
		d.finish(context.Background(), st, now)
		done <- len(ch.Releases)
	}
	select {
	case d.calls <- f:
	case <-d.quit:
		return 0, ErrNotRunning
	}
	select {
	case n := <-done:
		return n, nil
	case <-d.quit:
		return 0, ErrNotRunning
	}
}

// outageKey names the outage session k is in, for its Inbox entries; ""
// when none.
func (d *Daemon) outageKey(k retry.Key) string {
	if o := d.outages.Of(k); o != nil {
		return o.Key()
	}
	return ""
}

// outageEntry is the outage's own Inbox entry, saying what: one per
// outage, replaced as it goes on; its sessions' entries are under it.
func outageEntry(o *outage.Outage, what string, now time.Time) inbox.EntryRow {
	e := inbox.EntryRow{Time: now, What: what, Class: string(classify.ProviderError), Provider: o.Provider, Outage: o.Key()}
	if len(o.Errors) > 0 {
		e.ErrorText = o.Errors[0]
	}
	return e
}
