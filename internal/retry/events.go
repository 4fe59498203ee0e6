package retry

// What each kind of event does to the session: its turns, a person's
// message, the agent's work and process, boxes, dead turns of every class.

import (
	"strings"
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
)

// observe takes one event: whether a turn ended, what the registry says
// of the agent's process, then what the event's kind does.
func (s *Session) observe(ev classify.Event, now time.Time, set Settings) {
	if ev.Project != "" {
		s.project = ev.Project
	}
	switch ev.Kind {
	case classify.TurnDone, classify.TurnFailed:
		s.turnEnded, s.endedTurn = true, ""
		if ev.TurnScoped() {
			s.endedTurn = ev.ID
		}
	case classify.TurnStarted, classify.UserMessage:
		s.turnEnded, s.endedTurn = false, ""
	}
	if ev.Process == nil && (ev.Kind == classify.UserMessage || ev.Kind == classify.TurnStarted) && s.agentStatus == classify.StatusExited {
		// A new turn after the process was gone: a process (a resumed
		// session) writes the session again; whether it is idle is unknown.
		s.agentStatus = ""
	}
	s.observeProcess(ev)
	switch ev.Kind {
	case classify.TurnFailed:
		s.deadTurn(ev, now, set)
	case classify.UsageLimited:
		f := classify.Failure{Class: classify.UsageLimit}
		if ev.Failure != nil {
			f = *ev.Failure
		}
		s.usageLimit(f, ev.AutoContinue, false, now, set)
	case classify.UserMessage:
		s.userMessage(ev, now, set)
	case classify.TurnStarted, classify.AgentActivity, classify.AgentRetrying:
		s.agentWorking(ev)
	case classify.TurnDone:
		s.turnDone()
	case classify.BoxOpened:
		s.boxOpen = true
		if ev.Box != "" {
			s.boxName = ev.Box
		}
	case classify.BoxClosed:
		s.boxOpen, s.boxName = false, ""
		if ev.Process == nil && s.agentStatus == classify.StatusWaiting {
			s.agentStatus = ""
		}
		s.unblocked(now, set)
	case classify.AgentIdle:
		if ev.Process == nil || ev.Process.Status == "" {
			s.agentStatus = classify.StatusIdle
		}
		s.unblocked(now, set)
	}
}

// observeProcess records what a live-registry event says about the agent
// process. A status older than the episode's dead turn is stale.
func (s *Session) observeProcess(ev classify.Event) {
	p := ev.Process
	if p == nil || p.Status == "" {
		return
	}
	if e := s.episode; e != nil && !ev.Time.IsZero() && ev.Time.Before(e.FailedAt) {
		s.decide("registry status %q is older than the dead turn; ignored", p.Status)
		return
	}
	s.agentStatus = p.Status
	if p.Waiting != "" {
		s.boxName = p.Waiting
	}
	pend := s.pending
	if pend == nil {
		if p.Status == classify.StatusExited && s.state == Working {
			s.crashed()
		}
		return
	}
	switch p.Status {
	case classify.StatusExited:
		s.tell(advice.Undelivered(s.key.Agent, advice.Why{Cause: advice.Gone}), pend.For, s.attempts(pend.For))
	case classify.StatusBusy:
		s.pending = nil
		s.decide("the agent's registry says it is busy: pending attempt %d cancelled", pend.Attempt)
		s.limit = nil
		s.show(Working, time.Time{}, "")
	}
}

// crashed handles an agent process that went away with its turn still open:
// nothing recorded why, so it is told once as unknown and never retried
// (docs/agents/claude.md §6: "that is a crash: report it, do not retry").
func (s *Session) crashed() {
	s.endEpisode("the agent process exited mid-turn")
	s.decide("the agent process exited with its turn open: told once, not retried")
	f := classify.Failure{Class: classify.Unknown, Message: "the agent process exited while its turn was still open; it recorded no error"}
	s.entry("the agent stopped in the middle of a turn; not retried", f, nil, 0)
	s.show(Failed, time.Time{}, "stopped mid-turn")
}

// deadTurn handles a TurnFailed event.
func (s *Session) deadTurn(ev classify.Event, now time.Time, set Settings) {
	f := classify.Failure{Class: classify.Unknown}
	if ev.Failure != nil {
		f = *ev.Failure
	}
	attempts := s.attempts(forRetry)
	switch f.Class {
	case classify.ProviderError:
		s.providerError(f, ev.Time, now, set)
	case classify.UsageLimit:
		s.usageLimit(f, ev.AutoContinue, true, now, set)
	case classify.Cancelled:
		s.endEpisode("the person interrupted the turn")
		s.show(Cancelled, time.Time{}, "")
	case classify.Auth:
		s.endEpisode("sign-in failed")
		what := advice.SignIn(s.key.Agent, f.Hint)
		s.entry(what, f, nil, attempts)
		s.notify(advice.Title(s.key.Agent)+" needs sign-in", what, f)
		s.show(NeedsSignIn, time.Time{}, what)
	case classify.Rejected:
		s.endEpisode("the provider refused the request")
		s.entry("the provider refused the request; not retried", f, nil, attempts)
		s.show(Failed, time.Time{}, "")
	default:
		s.endEpisode("unrecognised error")
		s.entry("the turn failed with an error nudge does not recognise; not retried", f, nil, attempts)
		s.show(Failed, time.Time{}, "")
	}
}

// userMessage tells nudge's own continuation from a person typing.
func (s *Session) userMessage(ev classify.Event, now time.Time, set Settings) {
	if c := s.sent; c != nil && !c.Echoed && !now.After(c.At.Add(EchoWindow)) && sameText(ev.Text, c.Text) {
		c.Echoed = true
		s.decide("user message is nudge's own attempt %d: its turn started", c.Attempt)
		s.show(Working, time.Time{}, sentNote(c, set))
		return
	}
	s.endEpisode("the person typed a message")
	s.show(Working, time.Time{}, "")
}

// agentWorking handles signs that the agent is on a turn: a pending
// continuation is cancelled, the attempt count is kept. Signs older than
// the episode's dead turn are stale.
func (s *Session) agentWorking(ev classify.Event) {
	if e := s.episode; e != nil && s.pending != nil && !ev.Time.IsZero() && ev.Time.Before(e.FailedAt) {
		s.decide("%s recorded before the dead turn; ignored", ev.Kind)
		return
	}
	if p := s.pending; p != nil {
		s.pending = nil
		s.decide("the agent is working (%s): pending attempt %d cancelled", ev.Kind, p.Attempt)
	}
	if s.limit != nil && !s.limit.Fired {
		s.limit = nil
	}
	note := ""
	if ev.Kind == classify.AgentRetrying {
		note = "the agent is retrying by itself"
	}
	s.show(Working, time.Time{}, note)
}

// turnDone resets everything: a completed turn ends the episode (docs/behaviour.md §3
// step 4); after nudge's continuation, the session recovered.
func (s *Session) turnDone() {
	switch c := s.sent; {
	case c != nil && s.current(c):
		s.step(StepRecovered, "turn completed after continuation %d: recovered", c.Attempt)
	case s.episode != nil || s.pending != nil || s.limit != nil:
		s.decide("turn completed: attempt counter reset")
	}
	s.overtake()
	s.show(Finished, time.Time{}, "")
}

// endEpisode ends the episode, the usage limit and any pending continuation
// because something else took over, saying so when there was one.
func (s *Session) endEpisode(why string) {
	switch {
	case s.pending != nil:
		s.decide("%s: pending attempt %d cancelled", why, s.pending.Attempt)
	case s.episode != nil && !s.episode.Over:
		s.decide("%s: retry episode over, attempt counter reset", why)
	}
	s.overtake()
}

// overtake forgets the episode, the usage limit (and that it was told) and
// any pending continuation: the session moved on, so a late delivery report
// of the last continuation is no longer news.
func (s *Session) overtake() {
	s.episode, s.pending, s.limit, s.toldReset = nil, nil, nil, time.Time{}
	if s.sent != nil {
		s.sent.Overtaken = true
	}
}

// sameText compares two messages the way an agent may record typed text:
// trimmed, with runs of white space folded.
func sameText(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}
