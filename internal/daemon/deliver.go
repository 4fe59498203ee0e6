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

// newInjector builds the delivery backends in the configured order.
func newInjector(config.Config) *inject.Injector {
	return inject.New(inject.NewTmux())
}

// startInject records the attempt as "sending", then delivers it off the
// loop; the outcome comes back through d.calls.
func (d *Daemon) startInject(ctx context.Context, s *session, act retry.Inject) {
	now := d.now()
	episode := s.machine.Episode()
	id, err := d.db.BeginAttempt(ctx, inbox.AttemptRow{
		Agent: s.key.Agent, Session: s.key.Session, Episode: episode, Attempt: act.Attempt, Text: act.Text, Started: now,
	})
	if errors.Is(err, inbox.ErrAttemptExists) {
		d.log.Warn("attempt already made; not sending it again", "session", s.key.Session, "attempt", act.Attempt)
		return
	}
	if err != nil {
		d.log.Error("record attempt", "session", s.key.Session, "err", err)
		d.delivered(ctx, s, act.Attempt, 0, inject.Delivery{}, fmt.Errorf("could not record the attempt: %w", err))
		return
	}
	target := inject.Target{
		Agent: s.key.Agent, Session: s.key.Session, Project: s.project,
		Idle: d.idleCheck(s),
	}
	if p := s.process; p != nil && p.Status != "exited" {
		target.PID, target.TmuxPane = p.PID, p.TmuxPane
	}
	d.log.Info("sending continuation", "agent", s.key.Agent, "session", s.key.Session, "attempt", act.Attempt, "pid", target.PID, "pane", target.TmuxPane)
	go func() {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		del, derr := d.injector.Deliver(dctx, target, act.Text)
		select {
		case d.calls <- func() { d.delivered(ctx, s, act.Attempt, id, del, derr) }:
		case <-ctx.Done():
		}
	}()
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
	if id != 0 {
		status, reason := inbox.AttemptSent, ""
		if derr != nil {
			status, reason = inbox.AttemptFailed, derr.Error()
		}
		if err := d.db.FinishAttempt(ctx, id, status, del.Backend, del.Where, reason); err != nil {
			d.log.Error("record attempt outcome", "session", s.key.Session, "err", err)
		}
	}
	if derr != nil {
		d.log.Warn("continuation not delivered", "session", s.key.Session, "attempt", attempt, "err", derr)
	} else {
		d.log.Info("continuation delivered", "session", s.key.Session, "attempt", attempt, "backend", del.Backend, "where", del.Where)
	}
	st := newStep()
	d.apply(s, s.machine.Delivered(attempt, derr, now, d.settings), now, st)
	d.finish(ctx, st, now)
}
