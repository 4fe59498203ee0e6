package daemon

import (
	"os"
	"reflect"
	"sort"
	"time"

	"nudge/internal/classify"
	"nudge/internal/retry"
	"nudge/internal/status"
	"nudge/internal/version"
)

// refreshView rebuilds the picture that Status hands out, after anything
// it shows changed: a step, the watcher's counts, a session leaving the
// views (viewExpires). It runs on the loop, so readers never touch the
// sessions themselves.
func (d *Daemon) refreshView() {
	d.viewBuilt, d.viewDue = time.Now(), time.Time{}
	stats := d.source.Stats()
	v := status.Status{
		Daemon: &status.Daemon{
			PID: os.Getpid(), Version: version.String(), StartedAt: d.started,
			Ready: d.ready, FilesWatched: stats.FilesWatched, FilesOpen: stats.FilesOpen,
			LinesSkipped: stats.LinesSkipped, SkippedFiles: make([]status.SkippedFile, 0, len(stats.SkippedFiles)),
			StoreFailing: d.storeView(), UnknownShapes: d.unknownShapes(),
		},
		Sessions: make([]status.Session, 0, len(d.sessions)),
	}
	for _, f := range stats.SkippedFiles {
		v.Daemon.SkippedFiles = append(v.Daemon.SkippedFiles, status.SkippedFile(f))
	}
	for _, st := range stats.Stuck {
		v.Daemon.Stuck = append(v.Daemon.Stuck, status.Stuck{Source: st.Source, Since: st.Since, Error: st.Err})
	}
	set := settingsView(d.settings)
	v.Settings = &set
	now := d.now()
	d.viewExpires = time.Time{}
	for _, s := range d.sessions {
		state, until := s.machine.State()
		if !Shown(state, s.updated, now) {
			continue
		}
		if leaves := s.updated.Add(recentWindow); !Shown(state, s.updated, leaves) && (d.viewExpires.IsZero() || leaves.Before(d.viewExpires)) {
			d.viewExpires = leaves
		}
		sv := sessionView(s.key, s.project, state, s.machine.Note(), until, s.updated)
		f := s.machine.Failing()
		sv.Provider, sv.Endpoint, sv.Model = f.Provider, f.Endpoint, f.Model
		v.Sessions = append(v.Sessions, sv)
	}
	sort.Slice(v.Sessions, func(i, j int) bool { return v.Sessions[i].UpdatedAt.After(v.Sessions[j].UpdatedAt) })
	for _, o := range d.outages.Outages() {
		v.Outages = append(v.Outages, status.Outage{Provider: o.Provider, Title: classify.ProviderTitle(o.Provider),
			Since: o.Start, Sessions: len(o.Members), Waiting: o.Waiting()})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if reflect.DeepEqual(d.view, v) {
		return
	}
	d.view = v
	if d.changed != nil {
		close(d.changed)
	}
	d.changed = make(chan struct{})
}

// sessionView is one session as the views show it, from the running
// machine or from the database alike: until is when a pending continuation
// goes (RetryAt) or when a usage limit resets (ResetAt).
func sessionView(key retry.Key, project string, state retry.State, note string, until, updated time.Time) status.Session {
	s := status.Session{
		Agent: key.Agent, Session: key.Session, Project: project,
		State: string(state), StateWords: status.StateWords(string(state)), Note: note, UpdatedAt: updated,
	}
	if state.Told() {
		s.Told = note
	}
	if !until.IsZero() {
		u := until.UTC()
		switch {
		case state.Due():
			s.RetryAt = &u
		case state == retry.UsageLimit:
			s.ResetAt = &u
		}
	}
	return s
}

// viewGap: changes that only move times and counts (an agent at work, a
// file opened) are shown at most this often; the first after a quiet
// moment at once.
const viewGap = 250 * time.Millisecond

// viewChanged rebuilds the view for a change of times or counts, or has
// the loop's timer do it within viewGap.
func (d *Daemon) viewChanged() {
	if time.Since(d.viewBuilt) >= viewGap {
		d.refreshView()
	} else if d.viewDue.IsZero() {
		d.viewDue = d.viewBuilt.Add(viewGap)
	}
}

// Changed returns a channel that is closed at the next change of the
// picture Status gives (sessions, states, settings); call it again after.
func (d *Daemon) Changed() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.changed == nil {
		d.changed = make(chan struct{})
	}
	return d.changed
}

// recentWindow is how long a quiet session stays in the views: long enough
// to cover a working day, short enough that the menu lists what is live.
const recentWindow = 24 * time.Hour

// Shown tells whether a session belongs in the views: it was active within
// recentWindow, or nudge is still acting on it.
func Shown(state retry.State, updated, now time.Time) bool {
	if state.Due() || state == retry.UsageLimit || state == retry.NeedsSignIn {
		return true
	}
	return now.Sub(updated) < recentWindow
}

// Status is the daemon's current picture.
func (d *Daemon) Status() status.Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.view
}

// wakeQueue holds when each session wants to be called back; one timer in
// the loop serves them all.
type wakeQueue map[retry.Key]time.Time

func (q *wakeQueue) add(k retry.Key, at time.Time) {
	if *q == nil {
		*q = wakeQueue{}
	}
	if cur, ok := (*q)[k]; ok && cur.Before(at) {
		return
	}
	(*q)[k] = at
}

func (q wakeQueue) next() (time.Time, bool) {
	var best time.Time
	for _, at := range q {
		if best.IsZero() || at.Before(best) {
			best = at
		}
	}
	return best, !best.IsZero()
}

// due removes and returns every session whose wake time has come.
func (q wakeQueue) due(now time.Time) []retry.Key {
	var keys []retry.Key
	for k, at := range q {
		if !at.After(now) {
			keys = append(keys, k)
			delete(q, k)
		}
	}
	return keys
}
