//go:build linux

// Package e2e runs real agent CLIs against a fake provider on loopback, with
// the nudge daemon watching them.
//
// As root the whole test binary re-executes itself inside a fresh network
// namespace that has only loopback (`unshare -n`), so the fake provider, tmux,
// the agent and the daemon share one loopback and nothing can leave the
// machine. Without root everything still binds and talks to 127.0.0.1 only.
//
// Run:
//
//	.ci/install-agents.sh          # once; installs the CLI into the cache
//	go test -count=1 -v ./e2e/
//
// TestMain builds ./cmd/nudge first, unless NUDGE_E2E_NUDGE_BIN names a
// binary. NUDGE_E2E_<AGENT> names an agent's executable other than the
// cached one. Without an agent's CLI its tests skip, and fail under CI=true.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"nudge/e2e/daemontest"
)

const (
	// envInNetns marks the re-executed test binary inside the namespace.
	envInNetns = "NUDGE_E2E_IN_NETNS"
	// envNudgeBin names a built nudge binary; set by TestMain, or by a
	// person to test a prebuilt one.
	envNudgeBin = "NUDGE_E2E_NUDGE_BIN"
	// envNudgeBuildError carries the `go build ./cmd/nudge` failure.
	envNudgeBuildError = "NUDGE_E2E_NUDGE_BUILD_ERROR"
	// envCache is the folder .ci/install-agents.sh installs into.
	envCache = "NUDGE_E2E_CACHE"
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv(envInNetns) != "" {
		return m.Run()
	}
	if os.Getenv(envNudgeBin) == "" {
		dir, err := os.MkdirTemp("", "nudge-e2e-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		// Built outside the namespace, where the module cache and
		// toolchain may still need the network.
		bin, err := daemontest.Build(dir, daemontest.Nudge)
		if err != nil {
			os.Setenv(envNudgeBuildError, err.Error())
		} else {
			os.Setenv(envNudgeBin, bin)
		}
	}
	if os.Geteuid() != 0 {
		return m.Run()
	}
	return runInNetns()
}

// runInNetns re-executes this test binary, with its arguments, in a new
// network namespace whose loopback is up, and returns its exit status.
func runInNetns() int {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: running as root needs unshare(1) to isolate the network:", err)
		return 1
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: running as root needs ip(8) to bring up loopback:", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: find test binary:", err)
		return 1
	}
	args := append([]string{"-n", "--", "sh", "-c", `"$0" link set lo up && exec "$@"`, ip, self}, os.Args[1:]...)
	cmd := exec.Command(unshare, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envInNetns+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} // kept across exec: the tests die with us
	if err := cmd.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "e2e: run tests in a network namespace:", err)
		return 1
	}
	return 0
}
