package durability

import (
	"testing"

	"nudge/internal/history"
)

// writeHistory writes n session files under home (package history) and
// returns how many dead turns they hold.
func writeHistory(t *testing.T, home string, n int) (deadTurns int) {
	t.Helper()
	dead, err := history.Write(home, n)
	if err != nil {
		t.Fatal(err)
	}
	return dead
}
