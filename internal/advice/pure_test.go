package advice

import (
	"testing"

	"nudge/internal/testenv"
)

// What the person is told is pure: the retry machine builds it.
func TestPure(t *testing.T) {
	testenv.Pure(t, "nudge/internal/advice", "nudge/internal/classify", "nudge/internal/jsonscan")
}
