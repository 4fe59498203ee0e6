package main

import (
	"errors"
	"testing"
)

// Bad usage is exit status 2 (SPEC §8): an unknown command, an unknown flag
// or a wrong argument count are all usage errors.
func TestBadUsageIsUsageError(t *testing.T) {
	for _, args := range [][]string{{"bogus"}, {"status", "--bogus"}, {"explain"}, {"retry", "maybe"}} {
		_, err := runNudge(t, "", args...)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("nudge %v: error %v, want a usage error", args, err)
		}
	}
	if _, err := runNudge(t, ""); err != nil {
		t.Errorf("nudge with no arguments: %v, want the help", err)
	}
}
