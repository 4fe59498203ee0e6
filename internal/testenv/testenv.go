// Package testenv lets tests ask for the real programs they need: a test
// skips on a developer machine that lacks one, and fails under CI=true.
// It also holds what tests of real parts share: the docs' tables, and the
// wait for a process just started (Execed).
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true), where every
// program the suite needs must be installed.
func InCI() bool { return os.Getenv("CI") == "true" }

// Need returns the path of program, or skips the test (fails it under CI)
// when the program is not installed.
func Need(t testing.TB, program string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		Missing(t, program+" is not installed")
	}
	return path
}

// Missing skips the test for reason, or fails it under CI.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if InCI() {
		t.Fatalf("required under CI=true: %s", reason)
	}
	t.Skip(reason)
}

// Slow skips, under -short (`make unit`), a test that takes seconds.
func Slow(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("takes seconds: skipped under -short")
	}
}
