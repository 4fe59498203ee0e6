package classify

import (
	"testing"

	"nudge/internal/testenv"
)

// classify is pure parsing: bytes and records in, events out. What it may
// read beside the records comes through Files.
func TestPure(t *testing.T) {
	testenv.Pure(t, "nudge/internal/classify", "nudge/internal/jsonscan")
}
