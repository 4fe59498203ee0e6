package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"nudge/internal/classify"
	"nudge/internal/config"
	"nudge/internal/inbox"
	"nudge/internal/inject"
	"nudge/internal/retry"
)

// NewInjector builds the delivery backends in the configured order
// (inject.order); an unknown backend is an error.
func NewInjector(cfg config.Config) (*inject.Injector, error) {
	inj, err := inject.Build(cfg.Inject.Order, inject.Options{Resume: cfg.Inject.Resume, Executables: executables})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return inj, nil
}

// executables are an agent's process names.
func executables(agent string) []string {
	a, _ := classify.Lookup(agent)
	return a.Executables
}

// sessionTarget is where a continuation for a session goes. A live registry
// picture (proc) names the process and gives the last-moment Idle check;
// a registry saying the process exited leaves no process (a headless
// continuation may still be allowed); otherwise the process is to be found
// from the Hint (findProcess). Without a registry, the last moment relies on
// the agent's ScreenReady where it has one, and on its records: the retry
// machine re-read them just before (SPEC §3 step 2) and never sends while
// they show a box open. others are processes that hold other sessions.
func sessionTarget(key retry.Key, project, transcript string, proc *classify.Process, idle func(context.Context) error, others []int) inject.Target {
	agent, _ := classify.Lookup(key.Agent)
	t := inject.Target{
		Agent: key.Agent, Session: key.Session, Project: project,
		ScreenReady: agent.ScreenReady,
		Hint: inject.Hint{
			Agent: key.Agent, Session: key.Session, Project: project, File: transcript,
			Executables: agent.Executables, Others: others,
		},
	}
	switch {
	case proc != nil && proc.Status != retry.StatusExited:
		t.PID, t.TmuxPane, t.Idle = proc.PID, proc.TmuxPane, idle
	case proc != nil:
		t.Unfound = fmt.Errorf("%w: agent process %d exited (its live registry is gone)", inject.ErrNoProcess, proc.PID)
	}
	return t
}

// findProcess fills in t's agent process when nothing named it yet; it
// reads the process table, so it runs off the loop.
func findProcess(ctx context.Context, t *inject.Target) {
	if t.PID != 0 || t.Unfound != nil {
		return
	}
	t.PID, t.Unfound = inject.FindProcess(ctx, t.Hint)
}

// othersPIDs are the live processes registries name for sessions other than s.
func (d *Daemon) othersPIDs(s *session) []int {
	var pids []int
	for _, o := range d.sessions {
		if o != s && o.process != nil && o.process.Status != retry.StatusExited && o.process.PID > 0 {
			pids = append(pids, o.process.PID)
		}
	}
	return pids
}

// ExplainDelivery says, for `nudge doctor`, how inj would deliver a
// continuation for a session now, or why it cannot: the target as found
// (from the process table: the daemon's live registry is not at hand) and
// each backend's answer.
func ExplainDelivery(ctx context.Context, inj *inject.Injector, row inbox.SessionRow) (inject.Target, []inject.Finding) {
	t := sessionTarget(retry.Key{Agent: row.Agent, Session: row.Session}, row.Project, row.Path, nil, nil, nil)
	findProcess(ctx, &t)
	return t, inj.Explain(ctx, t)
}

// startInject delivers an attempt already stored as "sending", off the
// loop; the outcome comes back through d.calls.
func (d *Daemon) startInject(ctx context.Context, s *session, a inbox.AttemptRow) {
	target := sessionTarget(s.key, s.project, s.transcript, s.process, d.idleCheck(s), d.othersPIDs(s))
	d.log.Info("sending continuation", "agent", s.key.Agent, "session", s.key.Session, "attempt", a.Attempt, "pid", target.PID, "pane", target.TmuxPane)
	d.offLoop.Go(func() {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		findProcess(dctx, &target)
		del, derr := d.injector.Deliver(dctx, target, a.Text)
		select {
		case d.calls <- func() { d.delivered(ctx, s, a.Attempt, a.ID, del, derr) }:
		case <-ctx.Done():
		}
	})
}

// idleCheck re-reads the session's live registry right before typing: the
// agent must still be idle at its prompt with no box open.
func (d *Daemon) idleCheck(s *session) func(context.Context) error {
	path, agentName := s.registry, s.key.Agent
	return func(context.Context) error {
		if path == "" {
			return errors.New("no live registry for the session: cannot tell whether a box is open")
		}
		agent, ok := classify.Lookup(agentName)
		if !ok {
			return fmt.Errorf("unknown agent %q", agentName)
		}
		events, err := classify.ReadFile(path, agent)
		if err != nil {
			return fmt.Errorf("re-read live registry: %w", err)
		}
		for i := len(events) - 1; i >= 0; i-- {
			if p := events[i].Process; p != nil {
				if p.Status != "idle" {
					return fmt.Errorf("agent is %s, not idle at its prompt", firstNonEmpty(p.Waiting, p.Status))
				}
				return nil
			}
		}
		return errors.New("live registry says nothing about the agent's state")
	}
}

func (d *Daemon) delivered(ctx context.Context, s *session, attempt int, id int64, del inject.Delivery, derr error) {
	now := d.now()
	st := newStep()
	if id != 0 {
		o := inbox.Outcome{ID: id, Status: inbox.AttemptSent, Backend: del.Backend, Target: del.Where, Finished: now}
		if derr != nil {
			o.Status, o.Reason = inbox.AttemptFailed, derr.Error()
		}
		st.batch.Outcomes = append(st.batch.Outcomes, o)
	}
	if derr != nil {
		d.log.Warn("continuation not delivered", "session", s.key.Session, "attempt", attempt, "err", derr)
	} else {
		d.log.Info("continuation delivered", "session", s.key.Session, "attempt", attempt, "backend", del.Backend, "where", del.Where)
	}
	d.apply(s, s.machine.Delivered(attempt, derr, now, d.settings), now, st)
	d.finish(ctx, st, now)
}
