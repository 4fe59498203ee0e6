package daemon

import (
	"context"
	"errors"
	"time"

	"nudge/internal/classify"
	"nudge/internal/inject"
	"nudge/internal/proc"
	"nudge/internal/retry"
)

// Agents with no live registry (Codex, Kimi, OpenCode without a port, …)
// record nothing when their process dies mid-turn (docs/agents/kimi.md A3: "no cause is
// recorded anywhere"); the turn would look open forever. So once an open
// turn has been quiet for a while its process is looked for, once, and
// its end is watched (proc.WatchExit): no polling, no periodic search.
const (
	// quietBeforeLiveCheck is longer than any gap the agents leave between
	// records while they retry by themselves (≈40 s for Claude Code,
	// docs/agents/claude.md §6; ≤ 39 s for Kimi Code, docs/agents/kimi.md A3), so a working agent is
	// never asked about.
	quietBeforeLiveCheck = 2 * time.Minute
	// maxLiveCheckGap bounds how far apart the checks of a turn whose
	// process could not be told grow (they double from quietBeforeLiveCheck).
	maxLiveCheckGap = time.Hour
)

// scheduleLiveCheck sets when s's process is looked for: once its open
// turn has been quiet for quietBeforeLiveCheck, unless its agent keeps a
// live registry or its process's end is already watched.
func (d *Daemon) scheduleLiveCheck(s *session) {
	state, _ := s.machine.State()
	if state != retry.Working || s.registry != "" || s.probing || s.exit != nil {
		delete(d.liveDue, s.key)
		return
	}
	gap := min(quietBeforeLiveCheck<<min(s.liveTries, 10), maxLiveCheckGap)
	d.liveDue[s.key] = s.updated.Add(gap)
}

// scheduleSettle sets when the reader of path next judges its quiet file
// (classify.Settler: Codex 0.98 rollouts write no turn end, OpenCode's
// undecided turns): one timer per file, from its last record.
func (d *Daemon) scheduleSettle(path string, now time.Time) {
	f := d.files[path]
	if f == nil {
		return
	}
	s, ok := f.reader.(classify.Settler)
	if !ok {
		return
	}
	last := f.lastRead
	if after := s.SettleAfter(now.Sub(last)); after > 0 {
		d.settleDue[path] = last.Add(after)
	} else {
		delete(d.settleDue, path)
	}
}

// settleQuietFiles lets the readers whose files have been quiet long enough
// judge what they read.
func (d *Daemon) settleQuietFiles(ctx context.Context) {
	now := d.now()
	var settled []found
	for path, at := range d.settleDue {
		if now.Before(at) {
			continue
		}
		delete(d.settleDue, path)
		f := d.files[path]
		if f == nil {
			continue
		}
		s, ok := f.reader.(classify.Settler)
		if !ok {
			continue
		}
		events := s.Settle(now.Sub(f.lastRead))
		d.scheduleSettle(path, now) // the next judgement, if one still waits
		for _, ev := range events {
			// A reader settles a turn once: its file and the time of its
			// last record name the event.
			ident := eventIdent(ev, 0, []byte("settled\x00"+path+"\x00"+ev.Time.Format(time.RFC3339Nano)))
			settled = append(settled, found{ev: ev, path: path, ident: ident})
		}
	}
	if len(settled) > 0 {
		d.observeSettled(ctx, settled)
	}
}

// observeSettled stores what settled files gave; a store that refuses it
// gets it again once it works (the readers settle only once).
func (d *Daemon) observeSettled(ctx context.Context, settled []found) {
	now := d.now()
	st := newStep()
	st.redo = func(ctx context.Context) { d.observeSettled(ctx, settled) }
	known := map[string]bool{}
	for _, f := range settled {
		d.observe(st, f, known, false, now)
	}
	d.finish(ctx, st, now)
}

// checkLiveness looks, off the loop, for the process of every quiet open
// turn whose check is due. A process not found is gone; one found has its
// end watched, and at its end the search is made once more (another
// process may have taken the session on).
func (d *Daemon) checkLiveness(ctx context.Context) {
	now := d.now()
	for key, at := range d.liveDue {
		if now.Before(at) {
			continue
		}
		delete(d.liveDue, key)
		s := d.sessions[key]
		if s == nil {
			continue
		}
		t := sessionTarget(s.key, s.project, s.transcript, nil, nil, d.othersPIDs(s))
		if len(t.Hint.Executables) == 0 || t.Hint.Project == "" {
			continue
		}
		s.probing = true
		d.offLoop.Go(func() { d.probe(ctx, s, t.Hint) })
	}
}

// probe looks for s's process and hands the answer to the loop.
func (d *Daemon) probe(ctx context.Context, s *session, h inject.Hint) {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	exit, err := findExit(pctx, h)
	cancel()
	gone := errors.Is(err, inject.ErrNoProcess)
	select {
	case d.calls <- func() {
		d.worked()
		d.probed(ctx, s, h, gone, exit)
	}:
	case <-ctx.Done():
		if exit != nil {
			exit.Stop()
		}
	}
}

// findExit finds the session's process and watches its end; an error
// wrapping inject.ErrNoProcess says it is gone.
func findExit(ctx context.Context, h inject.Hint) (*proc.Exit, error) {
	pid, err := inject.FindProcess(ctx, h)
	if err != nil {
		return nil, err
	}
	p, err := proc.Get(pid)
	if err != nil {
		return nil, err
	}
	return proc.WatchExit(p)
}

// probed takes a liveness answer: a gone process of a still-open turn is an
// ending without a result; a live one's end is waited for, then looked for
// again; a check that could not tell is tried again later.
func (d *Daemon) probed(ctx context.Context, s *session, h inject.Hint, gone bool, exit *proc.Exit) {
	s.probing, s.exit = false, nil
	switch {
	case exit != nil:
		s.exit, s.liveTries = exit, 0
		d.offLoop.Go(func() {
			select {
			case <-exit.Done:
				d.probe(ctx, s, h)
			case <-ctx.Done():
				exit.Stop()
			}
		})
		return
	case !gone:
		s.liveTries++
		d.log.Debug("cannot tell whether the agent process is alive; looking again later", "session", s.key.Session, "tries", s.liveTries)
		d.scheduleLiveCheck(s)
		return
	}
	if state, _ := s.machine.State(); state != retry.Working {
		d.scheduleLiveCheck(s)
		return
	}
	now := d.now()
	d.log.Warn("agent process gone with its turn open", "agent", s.key.Agent, "session", s.key.Session)
	ev := classify.Event{Agent: s.key.Agent, Session: s.key.Session, Project: s.project, Time: now,
		Kind: classify.AgentIdle, Process: &classify.Process{Status: classify.StatusExited}}
	row := eventRow(ev, now)
	row.Detail = "no live process found for the session"
	st := newStep()
	st.batch.Events = append(st.batch.Events, row)
	d.act(st, s, now, func() []retry.Action { return s.machine.Observe(ev, now, d.settings) })
	d.finish(ctx, st, now)
}
