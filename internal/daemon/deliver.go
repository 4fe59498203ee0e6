package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"

	"nudge/internal/advice"
	"nudge/internal/classify"
	"nudge/internal/config"
	"nudge/internal/inbox"
	"nudge/internal/inject"
	"nudge/internal/retry"
	"nudge/internal/watch"
)

// NewInjector builds the delivery backends in the configured order
// (inject.order); an unknown backend is an error. log hears how headless
// continuations ended.
func NewInjector(cfg config.Config, log *slog.Logger) (*inject.Injector, error) {
	inj, err := inject.Build(cfg.Inject.Order, inject.Options{Resume: cfg.Inject.Resume, Executables: executables, Log: log})
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
// machine re-read them just before (docs/behaviour.md §3 step 2) and never sends while
// they show a box open. others are processes that hold other sessions.
func sessionTarget(key retry.Key, project, transcript string, proc *classify.Process, idle func(context.Context) error, others []int) inject.Target {
	agent, _ := classify.Lookup(key.Agent)
	t := inject.Target{
		Agent: key.Agent, Session: key.Session, Project: project,
		ScreenReady: agent.ScreenReady, ReadComposer: agent.ReadComposer, PasteSettle: agent.PasteSettle,
		Hint: inject.Hint{
			Agent: key.Agent, Session: key.Session, Project: project, File: transcript,
			Executables: agent.Executables, Others: others,
		},
	}
	switch {
	case proc != nil && proc.Status != classify.StatusExited:
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
		if o != s && o.process != nil && o.process.Status != classify.StatusExited && o.process.PID > 0 {
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
// loop; the place is recorded with the attempt right before the first key
// (inject.Target.Typing), and the outcome comes back through d.calls.
func (d *Daemon) startInject(ctx context.Context, s *session, a inbox.AttemptRow) {
	target := sessionTarget(s.key, s.project, s.transcript, s.process, d.idleCheck(s), d.othersPIDs(s))
	target.Typing = func(ctx context.Context, backend string, w inject.Where) error {
		place, err := json.Marshal(w)
		if err != nil {
			return fmt.Errorf("encode the place: %w", err)
		}
		if err := d.store.Typing(ctx, a.ID, backend, w.String(), string(place)); err != nil {
			return err
		}
		d.log.Info("sending continuation", "agent", s.key.Agent, "session", s.key.Session, "attempt", a.Attempt,
			"pid", w.PID, "backend", backend, "place", w.String())
		return nil
	}
	d.log.Debug("finding the terminal of a continuation", "agent", s.key.Agent, "session", s.key.Session, "attempt", a.Attempt)
	d.offLoop.Go(func() {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		findProcess(dctx, &target)
		del, derr := d.deliver.Deliver(dctx, target, a.Text)
		select {
		case d.calls <- func() {
			d.worked()
			d.delivered(ctx, s, a.Attempt, a.ID, del, undelivered(derr, del, target.PID))
		}:
		case <-ctx.Done():
		}
	})
}

// refusalCauses tells each of inject's refusals (inject.Refusals) in the
// person's words; the first that err wraps wins, since a refusal may carry
// others (ErrNoTerminal carries each backend's reason). An error that is no
// refusal is a terminal that refused the keys.
var refusalCauses = []struct {
	refusal error
	cause   advice.Cause
}{
	{inject.ErrBadSession, advice.Refused},
	{inject.ErrAmbiguous, advice.Ambiguous},
	{inject.ErrNoTerminal, advice.Unreachable},
	{inject.ErrNotInTerminal, advice.Unreachable},
	{inject.ErrNoProcess, advice.Unreachable},
	{inject.ErrNotAlone, advice.NotAlone},
	{inject.ErrDraft, advice.Draft},
	{inject.ErrLeftover, advice.Leftover},
	{inject.ErrPresent, advice.Present},
	{inject.ErrCopyMode, advice.CopyMode},
	{inject.ErrNoScreen, advice.NoScreen},
	{inject.ErrNotIdle, advice.NotIdle},
	{inject.ErrGone, advice.Gone},
	{inject.ErrOtherProcess, advice.Gone},
}

// undelivered is why a delivery failed, in the person's words (nil when it
// did not): the inject error's reason, the agent process and the place.
// The error itself stays in the debug log.
func undelivered(err error, del inject.Delivery, pid int) error {
	if err == nil {
		return nil
	}
	var why advice.Why
	if errors.As(err, &why) {
		return why
	}
	why = advice.Why{PID: pid, Place: strings.TrimSpace(del.Backend + " " + del.Where), Held: errors.Is(err, inject.ErrHeld), Cause: advice.TypingFailed}
	for _, r := range refusalCauses {
		if errors.Is(err, r.refusal) {
			why.Cause = r.cause
			break
		}
	}
	return fmt.Errorf("%w: %w", why, err)
}

// idleCheck re-reads the session's live registry right before typing: the
// agent must still be idle at its prompt with no box open.
func (d *Daemon) idleCheck(s *session) func(context.Context) error {
	path, agentName, log := s.registry, s.key.Agent, d.log
	return func(ctx context.Context) error {
		if path == "" {
			return errors.New("no live registry for the session: cannot tell whether a box is open")
		}
		agent, ok := classify.Lookup(agentName)
		if !ok {
			return fmt.Errorf("unknown agent %q", agentName)
		}
		events, err := watch.ReadFile(ctx, path, agent, log)
		if err != nil {
			return fmt.Errorf("re-read live registry: %w", err)
		}
		for i := len(events) - 1; i >= 0; i-- {
			if p := events[i].Process; p != nil {
				if p.Status != classify.StatusIdle {
					return fmt.Errorf("agent is %s, not idle at its prompt", firstNonEmpty(p.Waiting, p.Status))
				}
				return nil
			}
		}
		return errors.New("live registry says nothing about the agent's state")
	}
}

// delivered stores the outcome of an attempt with what the machine makes
// of it; derr, when the delivery failed, carries an advice.Why. A store
// that refuses it gets it again once it works.
func (d *Daemon) delivered(ctx context.Context, s *session, attempt int, id int64, del inject.Delivery, derr error) {
	now := d.now()
	reason := ""
	switch why := advice.WhyOf(derr); {
	case derr != nil && why.Held:
		reason = advice.Waiting(why.Cause)
		d.log.Info("continuation held: nothing typed", "session", s.key.Session, "attempt", attempt, "why", reason, "err", derr)
	case derr != nil:
		reason = advice.Undelivered(s.key.Agent, why)
		d.log.Debug("continuation not delivered", "session", s.key.Session, "attempt", attempt, "err", derr)
	}
	st := outcomeStep(id, del, reason, now)
	st.redo = func(ctx context.Context) { d.delivered(ctx, s, attempt, id, del, derr) }
	d.act(st, s, now, func() []retry.Action { return s.machine.Delivered(attempt, derr, now, d.settings) })
	if d.finish(ctx, st, now) && derr == nil {
		d.log.Debug("continuation typed", "session", s.key.Session, "attempt", attempt, "backend", del.Backend, "place", del.Where)
	}
}

// cutShort stores the outcome of an attempt a stop cut while typing, and
// tells it whatever the session did since.
func (d *Daemon) cutShort(ctx context.Context, s *session, a inbox.AttemptRow, why advice.Why) {
	now := d.now()
	st := outcomeStep(a.ID, inject.Delivery{Backend: a.Backend, Where: a.Target}, advice.Undelivered(s.key.Agent, why), now)
	st.redo = func(ctx context.Context) { d.cutShort(ctx, s, a, why) }
	d.act(st, s, now, func() []retry.Action { return s.machine.Interrupted(a.Attempt, why, now, d.settings) })
	d.finish(ctx, st, now)
}

// outcomeStep is a step that stores the outcome of attempt id (0: none):
// sent, or failed for reason.
func outcomeStep(id int64, del inject.Delivery, reason string, now time.Time) *step {
	st := newStep()
	if id != 0 {
		o := inbox.Outcome{ID: id, Status: inbox.AttemptSent, Backend: del.Backend, Target: del.Where, Finished: now}
		if reason != "" {
			o.Status, o.Reason = inbox.AttemptFailed, reason
		}
		st.batch.Outcomes = append(st.batch.Outcomes, o)
	}
	return st
}

// settleInterrupted tells what became of the attempts a stop cut while
// typing, once the first scan has read what the agent recorded meanwhile:
// an attempt the agent recorded as a message was delivered; any other may
// sit unsent in the agent's prompt, which nudge never types over. Text and
// Enter are two separate deliveries (both Claude Code and Codex would take
// an Enter in the same paste as part of it), so a stop between them leaves
// the text there.
func (d *Daemon) settleInterrupted(ctx context.Context) {
	todo := d.interrupted
	d.interrupted = nil
	for _, a := range todo {
		s := d.session(retry.Key{Agent: a.Agent, Session: a.Session})
		del := inject.Delivery{Backend: a.Backend, Where: a.Target}
		if s.machine.Echoed(a.Attempt) {
			d.log.Info("an attempt interrupted by a stop reached the agent", "session", a.Session, "attempt", a.Attempt)
			d.delivered(ctx, s, a.Attempt, a.ID, del, nil)
			continue
		}
		d.log.Warn("an attempt was interrupted while typing; not sending it again", "session", a.Session, "attempt", a.Attempt, "backend", a.Backend, "where", a.Target)
		d.cutShort(ctx, s, a, d.interruptedWhy(ctx, a))
	}
}

// interruptedWhy says where an interrupted attempt was being typed and
// whether it sits unsent in the prompt there: for sure when that place's
// screen shows its text at the bottom (the agent did not record it as a
// message, so it was not sent), else as a possibility.
func (d *Daemon) interruptedWhy(ctx context.Context, a inbox.AttemptRow) advice.Why {
	why := advice.Why{Cause: advice.Cut, Place: strings.TrimSpace(a.Backend + " " + a.Target)}
	var w inject.Where
	if a.Backend != "" && json.Unmarshal([]byte(a.Place), &w) == nil {
		why.PID = w.PID
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		screen, err := d.deliver.Screen(sctx, a.Backend, w)
		cancel()
		if err == nil && promptShows(screen, a.Text) {
			why.Cause = advice.CutBeforeEnter
		}
	}
	return why
}

// promptRows is how many of a screen's last non-blank rows can hold the prompt.
const promptRows = 12

// promptShows tells whether text shows in the last rows of screen, looking
// at letters and digits only (a terminal wraps and frames what it shows).
func promptShows(screen, text string) bool {
	rows := strings.Split(strings.TrimRight(screen, " \t\r\n"), "\n")
	rows = rows[max(0, len(rows)-promptRows):]
	want := alnum(text)
	return want != "" && strings.Contains(alnum(strings.Join(rows, "")), want)
}

// alnum keeps the letters and digits of s.
func alnum(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, s)
}
