package inject

import (
	"context"
	"time"

	"nudge/internal/classify"
	"nudge/internal/echo"
)

// typeThenEnter types text with typeText, waits until sc shows it at w,
// then presses Enter with enter. An application that reads the text and
// the Enter in one piece can take the Enter as part of a paste and leave
// the text unsent (seen with Claude Code in GNU screen under load), so
// Enter waits until the application drew the text: the end of the text
// shows once more than it did before typing. It waits at most echo.Wait,
// for an application that shows a paste otherwise ("[Pasted text #1]"),
// then presses Enter all the same; if the screen cannot be read, at once.
// An agent that takes an Enter soon after a paste as a new line
// (Target.PasteSettle) gets it that much later.
// Before Enter, the check the delivery set (withBeforeEnter) reads the
// screen once more: a prompt that holds more than the text gets no Enter
// (docs/behaviour.md §3). The text is typed once, whatever happens
// (docs/platform.md §7).
func typeThenEnter(ctx context.Context, sc Screener, w Where, text string, typeText, enter func() error) error {
	before, err := sc.Screen(ctx, w)
	if terr := typeText(); terr != nil {
		return terr
	}
	if err == nil {
		awaitShown(ctx, sc, w, echo.Of(text), before)
	}
	if settle := pasteSettleOf(ctx); settle > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(settle):
		}
	}
	if check, ok := ctx.Value(beforeEnterKey{}).(func(string, classify.Caret) error); ok {
		if hook := testHookBeforeEnter; hook != nil {
			hook()
		}
		screen, caret, err := look(ctx, sc, w)
		if err != nil {
			return refuse(ErrNotAlone, "nudge could not read the prompt again after pasting, so it did not press Enter: %v", err)
		}
		if err := check(screen, caret); err != nil {
			return err
		}
	}
	return enter()
}

// beforeEnterKey carries, in a Send's context, the check of the prompt
// that must pass before Enter (Deliver sets it from Target.ReadComposer).
type beforeEnterKey struct{}

func withBeforeEnter(ctx context.Context, check func(screen string, caret classify.Caret) error) context.Context {
	return context.WithValue(ctx, beforeEnterKey{}, check)
}

// pasteSettleKey carries, in a Send's context, how long after a paste the
// agent takes Enter as part of it (Target.PasteSettle).
type pasteSettleKey struct{}

func withPasteSettle(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, pasteSettleKey{}, d)
}

// pasteSettleOf is the paste settle ctx carries, 0 when none.
func pasteSettleOf(ctx context.Context) time.Duration {
	d, _ := ctx.Value(pasteSettleKey{}).(time.Duration)
	return d
}

// testHookBeforeEnter, when set (tests only, through NUDGE_TEST_ENTER_GAP
// in the daemon binary), runs between the paste and the last look.
var testHookBeforeEnter func()

// awaitShown returns once sc shows p at w more often than in before (or,
// for an empty probe, shows anything else than before), when reading the
// screen fails, when ctx ends, or after echo.Wait.
func awaitShown(ctx context.Context, sc Screener, w Where, p echo.Probe, before string) {
	was := p.In(before)
	shown := func(screen string) bool {
		if p == "" {
			return screen != before
		}
		return p.In(screen) > was
	}
	end := time.Now().Add(echo.Wait)
	for gap := 10 * time.Millisecond; ; gap = min(2*gap, 160*time.Millisecond) {
		screen, err := sc.Screen(ctx, w)
		if err != nil || shown(screen) {
			return
		}
		left := time.Until(end)
		if left <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(min(gap, left)):
		}
	}
}
