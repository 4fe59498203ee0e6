package retry

import (
	"testing"

	"nudge/internal/testenv"
)

// The retry machine is pure: events and the time in, actions out.
func TestPure(t *testing.T) {
	testenv.Pure(t, "nudge/internal/retry", "nudge/internal/advice", "nudge/internal/classify", "nudge/internal/jsonscan")
}
