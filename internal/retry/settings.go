package retry

import "time"

// The defaults of docs/behaviour.md §4 and the limits the machine never exceeds.
const (
	// MaxAttempts is the attempt cap: "After 3 failed attempts for the same
	// error, stop" (docs/behaviour.md §3 step 5); "The attempt cap is fixed at 3" (docs/behaviour.md §4).
	MaxAttempts = 3

	// DefaultFirstDelay, DefaultSecondDelay and DefaultThirdDelay are the
	// waits before attempts 1, 2 and 3 (docs/behaviour.md §3 step 1, docs/behaviour.md §4 retry.delays).
	DefaultFirstDelay  = 10 * time.Second
	DefaultSecondDelay = 30 * time.Second
	DefaultThirdDelay  = 90 * time.Second

	// DefaultBoxFirstCheck is the first recheck while a box is open, the
	// gaps then double up to DefaultBoxMaxGap, and after DefaultBoxGiveUp
	// with the box still open nudge stops and tells the person (docs/behaviour.md §3
	// "While a box stays open", docs/behaviour.md §4 retry.box_*).
	DefaultBoxFirstCheck = 10 * time.Second
	DefaultBoxMaxGap     = 5 * time.Minute
	DefaultBoxGiveUp     = time.Hour

	// DefaultUsageLimitMargin is how long after the agent's reported reset
	// time the "Continue after usage limit" automation waits, and
	// DefaultUsageLimitMarginAutoContinue the wait when the agent armed its
	// own continuation (docs/agents/claude.md §8.2: "≥ 3 min when the native wait is
	// armed, ≥ 1 min otherwise"; the native one fired ≈80 s after resetsAt).
	DefaultUsageLimitMargin             = time.Minute
	DefaultUsageLimitMarginAutoContinue = 3 * time.Minute

	// EchoWindow is how long after an Inject a user message with the same
	// text is taken for nudge's own continuation rather than a person: the
	// typed continuation is recorded as an ordinary typed user record
	// (docs/agents/claude.md §9.2, samples/claude/excerpts/injected-continue-after-500.jsonl),
	// written as soon as the CLI accepts the line.
	EchoWindow = 2 * time.Minute
)

// DefaultMessage is the continuation text (docs/behaviour.md §3 step 3). It is one line:
// a newline typed into a terminal would submit the message early.
const DefaultMessage = "Your previous attempt failed with a provider error " +
	"(the API returned an error or the connection dropped); nothing was wrong with your work. " +
	"Please continue where you left off."

// Settings are the person's choices that steer the machine (docs/behaviour.md §4, §5).
// The daemon passes the current settings into every call.
type Settings struct {
	Enabled bool            // "Retry after API errors"
	Message string          // continuation text; empty means DefaultMessage
	Delays  []time.Duration // one wait per attempt; the cap is len(Delays), never more than MaxAttempts; empty means the defaults

	BoxFirstCheck, BoxMaxGap, BoxGiveUp time.Duration // box rechecks; zero or negative means the default

	ContinueAfterUsageLimit                        bool          // "Continue after usage limit" (off by default, docs/behaviour.md §5)
	UsageLimitMargin, UsageLimitMarginAutoContinue time.Duration // wait after the reset time; zero or negative means the default

	// Paused keeps watching and recording but never injects: pending
	// continuations wait, and are re-evaluated when unpaused.
	Paused bool
}

// DefaultSettings returns the settings of docs/behaviour.md §4 and §5.
func DefaultSettings() Settings {
	return Settings{
		Enabled:                      true,
		Message:                      DefaultMessage,
		Delays:                       []time.Duration{DefaultFirstDelay, DefaultSecondDelay, DefaultThirdDelay},
		BoxFirstCheck:                DefaultBoxFirstCheck,
		BoxMaxGap:                    DefaultBoxMaxGap,
		BoxGiveUp:                    DefaultBoxGiveUp,
		UsageLimitMargin:             DefaultUsageLimitMargin,
		UsageLimitMarginAutoContinue: DefaultUsageLimitMarginAutoContinue,
	}
}

// normalized fills unset values with the defaults and caps the delays at
// MaxAttempts, so the machine never sees a zero gap or a fourth attempt.
func (s Settings) normalized() Settings {
	d := DefaultSettings()
	if s.Message == "" {
		s.Message = d.Message
	}
	if len(s.Delays) == 0 {
		s.Delays = d.Delays
	}
	if len(s.Delays) > MaxAttempts {
		s.Delays = s.Delays[:MaxAttempts]
	}
	orDefault(&s.BoxFirstCheck, d.BoxFirstCheck)
	orDefault(&s.BoxMaxGap, d.BoxMaxGap)
	orDefault(&s.BoxGiveUp, d.BoxGiveUp)
	orDefault(&s.UsageLimitMargin, d.UsageLimitMargin)
	orDefault(&s.UsageLimitMarginAutoContinue, d.UsageLimitMarginAutoContinue)
	return s
}

func orDefault(v *time.Duration, def time.Duration) {
	if *v <= 0 {
		*v = def
	}
}
