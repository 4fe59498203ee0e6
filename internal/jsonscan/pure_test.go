package jsonscan

import (
	"testing"

	"nudge/internal/testenv"
)

// jsonscan is pure logic: bytes in, answers out.
func TestPure(t *testing.T) {
	testenv.Pure(t, "nudge/internal/jsonscan")
}
