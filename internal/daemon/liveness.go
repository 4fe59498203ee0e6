package daemon

import (
	"context"
	"errors"
	"time"

	"nudge/internal/classify"
	"nudge/internal/inject"
	"nudge/internal/retry"
)

// Agents with no live registry (Codex, Kimi, OpenCode without a port, …)
// record nothing when their process dies mid-turn (kimi.md A3: "no cause is
// recorded anywhere"); the turn would look open forever. So an open turn that
// has been quiet for a while is checked against the process table.
const (
	// liveCheckEvery is how often quiet open turns are checked.
	liveCheckEvery = 30 * time.Second
	// quietBeforeLiveCheck is longer than any gap the agents leave between
	// records while they retry by themselves (≈40 s for Claude Code,
	// claude.md §6; ≤ 39 s for Kimi Code, kimi.md A3), so a working agent is
	// never asked about.
	quietBeforeLiveCheck = 2 * time.Minute
)

// settleQuietFiles lets readers that judge a turn only once their file has
// stopped growing (classify.Settler: Codex 0.98 rollouts write no turn end)
// look at their quiet files.
func (d *Daemon) settleQuietFiles(ctx context.Context) {
	now := d.now()
	var settled []found
	for path, r := range d.readers {
		s, ok := r.(classify.Settler)
		if !ok {
			continue
		}
		for _, ev := range s.Settle(now.Sub(d.lastRead[path])) {
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

// checkLiveness looks for the process of every quiet open turn whose agent
// has no live registry, off the loop; a session whose process is gone is
// told to its machine as an exited process.
func (d *Daemon) checkLiveness(ctx context.Context) {
	now := d.now()
	type probe struct {
		s *session
		t inject.Target
	}
	var probes []probe
	for _, s := range d.sessions {
		state, _ := s.machine.State()
		if state != retry.Working || s.registry != "" || s.probing || now.Sub(s.updated) < quietBeforeLiveCheck {
			continue
		}
		t := sessionTarget(s.key, s.project, s.transcript, nil, nil, d.othersPIDs(s))
		if len(t.Hint.Executables) == 0 || t.Hint.Project == "" {
			continue
		}
		s.probing = true
		probes = append(probes, probe{s, t})
	}
	if len(probes) == 0 {
		return
	}
	d.offLoop.Go(func() {
		for _, p := range probes {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := inject.FindProcess(pctx, p.t.Hint)
			cancel()
			gone := errors.Is(err, inject.ErrNoProcess)
			select {
			case d.calls <- func() { d.probed(ctx, p.s, gone) }:
			case <-ctx.Done():
				return
			}
		}
	})
}

// probed takes a liveness answer: a gone process of a still-open turn is an
// ending without a result.
func (d *Daemon) probed(ctx context.Context, s *session, gone bool) {
	s.probing = false
	if state, _ := s.machine.State(); !gone || state != retry.Working {
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
