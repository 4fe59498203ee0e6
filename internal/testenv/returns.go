package testenv

import (
	"testing"
	"time"
)

// returnWait bounds how long Returns waits: far longer than any call that
// does not block, so only one that waits for good fails.
const returnWait = 10 * time.Second

// Returns runs f and gives its error; the test fails at once when f is
// still waiting after 10 s (reading a FIFO no one writes, say). f is left
// blocked then.
func Returns(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(returnWait):
		t.Fatalf("%s still waits after %s", what, returnWait)
		return nil
	}
}
