//go:build nudge_testhooks

package inject

import (
	"os"
	"time"
)

// A daemon built with -tags nudge_testhooks waits NUDGE_TEST_ENTER_GAP
// (a duration) between pasting and its last look at the prompt, so a test
// can press a key in that gap. Release builds have no such hook.
func init() {
	if gap, err := time.ParseDuration(os.Getenv("NUDGE_TEST_ENTER_GAP")); err == nil && gap > 0 {
		testHookBeforeEnter = func() { time.Sleep(gap) }
	}
}
