package retry

import (
	"slices"
	"time"

	"nudge/internal/classify"
)

// Key names one session of one agent.
type Key struct {
	Agent   string `json:"agent"`
	Session string `json:"session"`
}

// State is what the person sees for a session (docs/behaviour.md §6).
type State string

// Session states, in the person's words.
const (
	Working    State = "working"     // a turn is open and the agent is on it
	Finished   State = "finished"    // the last turn completed
	Failed     State = "failed"      // the last turn died and nudge will not act on it
	Retrying   State = "retrying"    // a continuation is scheduled (see Until)
	WaitingBox State = "waiting_box" // a retry is due but a box is open
	WaitingYou State = "waiting_you" // a retry is due but you are using the session's prompt
	// WaitingProvider: a retry waits while another session probes the
	// provider it failed against (docs/behaviour.md §9).
	WaitingProvider State = "waiting_provider"
	UsageLimit      State = "usage_limit"  // limited until Until (zero: no reset time given)
	NeedsSignIn     State = "needs_signin" // an auth failure: the person must sign in
	Cancelled       State = "cancelled"    // the person interrupted the turn
	GaveUp          State = "gave_up"      // retries exhausted or undeliverable; the person was told
)

// States are the session states, in the order of docs/behaviour.md §6.
var States = []State{Working, Finished, Failed, Retrying, WaitingBox, WaitingYou, WaitingProvider, UsageLimit, NeedsSignIn, Cancelled, GaveUp}

// Due tells whether a continuation is pending in state st: scheduled, or
// due and held by a box, by the person at the keyboard or by a provider's
// outage.
func (st State) Due() bool {
	return st == Retrying || st == WaitingBox || st == WaitingYou || st == WaitingProvider
}

// Told tells whether the person was told about a session in state st,
// in the words of its note (the Inbox entry's and the notification's): it
// gave up, needs sign-in or waits for a usage limit (docs/behaviour.md §6).
func (st State) Told() bool { return st == GaveUp || st == NeedsSignIn || st == UsageLimit }

// known tells whether st is one of the states, or the empty state of a
// session before its first event.
func (st State) known() bool { return st == "" || slices.Contains(States, st) }

// Action is what the machine asks the daemon to do.
type Action interface{ action() }

// Inject asks for the continuation Text to be typed into the session. The
// daemon records the attempt as "sending" before it touches the terminal.
type Inject struct {
	Key     Key
	Attempt int // 1..3
	Text    string
	// Episode names the provider-error episode or usage limit the
	// continuation answers: with Attempt it identifies the attempt in the
	// ledger.
	Episode string
}

// Notify asks for a desktop notification and phone push.
type Notify struct {
	Key     Key
	Project string
	Title   string
	Body    string
}

// Entry asks for one Inbox entry.
type Entry struct {
	Key      Key
	Project  string
	What     string            // what happened, in a sentence
	Failure  classify.Failure  // the original error
	Latest   *classify.Failure // the episode's latest error, when its text differs from Failure
	Attempts int               // continuations sent for this failure
}

// Wake asks to be called back (Session.Tick) at At.
type Wake struct {
	Key Key
	At  time.Time
}

// SetState reports the session's new state for the menu and `nudge status`.
type SetState struct {
	Key   Key
	State State
	Until time.Time // Retrying: when the next attempt is due; UsageLimit: the reset time
	Note  string    // a short explanation ("attempt 2 of 3", "permission prompt open")
}

// Decision records why the machine did (or did not) act, for `nudge
// explain`; Step names the change of course it makes, if any.
type Decision struct {
	Key  Key
	What string
	Step Step
}

// Step is a change of a session's course that the log shows at INFO; the
// other decisions are details.
type Step string

// The steps.
const (
	StepScheduled Step = "scheduled" // a continuation is due at a time
	StepRecovered Step = "recovered" // the turn after nudge's continuation completed
	StepTold      Step = "told"      // the person is told, in an Inbox entry
)

func (Inject) action()   {}
func (Notify) action()   {}
func (Entry) action()    {}
func (Wake) action()     {}
func (SetState) action() {}
func (Decision) action() {}
