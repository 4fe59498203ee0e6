// Command nudge watches AI coding agents' session records, continues turns
// that died from provider errors, and tells the person when it cannot.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"nudge/internal/safetext"
	"nudge/internal/version"
)

// Exit statuses (SPEC §8).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks a command line that could not be understood.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	root := newRoot()
	err := root.Execute()
	if err == nil {
		os.Exit(exitOK)
	}
	safetext.Fprintf(os.Stderr, "nudge: %s\n", err)
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintln(os.Stderr, "Run 'nudge --help' for usage.")
		os.Exit(exitUsage)
	}
	os.Exit(exitFailure)
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "nudge",
		Short:         "Keep AI coding agents going after provider errors",
		Long:          "nudge watches the session records of AI coding agents, sends a continuation when a turn dies from a provider error, and tells you when it cannot help.",
		SilenceErrors: true,
		SilenceUsage:  true,
		// An unknown command is bad usage (exit 2), like an unknown flag.
		Args:    args(cobra.NoArgs),
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		Version: version.String(),
	}
	root.SetVersionTemplate("nudge {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().String("config", "", "config file (default: $NUDGE_CONFIG or the platform config folder)")
	root.AddCommand(
		newRunCmd(), newStatusCmd(), newInboxCmd(), newExplainCmd(), newClassifyCmd(), newDoctorCmd(),
		newToggleCmd("retry", "Turn \"Retry after API errors\" on or off", func(c *changeReq, on bool) { c.RetryEnabled = &on }),
		newToggleCmd("continue-after-limit", "Turn \"Continue after usage limit\" on or off", func(c *changeReq, on bool) { c.ContinueAfterUsageLimit = &on }),
		newPauseCmd("pause", true), newPauseCmd("resume", false), newQuitCmd(),
		newWrapCmd(), newHookCmd(), newMCPCmd(), newInstallCmd(), newUninstallCmd(), newConfigCmd(),
	)
	return root
}

// args wraps a cobra argument rule so that a wrong count is a usage error.
func args(rule cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := rule(cmd, a); err != nil {
			return usageError{err}
		}
		return nil
	}
}
