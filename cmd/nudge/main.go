// Command nudge watches AI coding agents' session records, continues turns
// that died from provider errors, and tells the person when it cannot.
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"nudge/internal/safetext"
	"nudge/internal/version"
)

// Exit statuses (docs/behaviour.md §8).
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
	root.SetHelpCommand(newHelpCmd())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().String("config", "", "config file (default: $NUDGE_CONFIG or the platform config folder)")
	root.AddCommand(
		newRunCmd(), newStatusCmd(), newInboxCmd(), newExplainCmd(), newClassifyCmd(), newDoctorCmd(),
		newToggleCmd("retry", "Turn \"Retry after API errors\" on or off", func(c *changeReq, on bool) { c.RetryEnabled = &on }),
		newToggleCmd("continue-after-limit", "Turn \"Continue after usage limit\" on or off", func(c *changeReq, on bool) { c.ContinueAfterUsageLimit = &on }),
		newPauseCmd("pause", true), newPauseCmd("resume", false), newQuitCmd(),
		newWrapCmd(), newHookCmd(), newMCPCmd(), newInstallCmd(), newUninstallCmd(), newConfigCmd(),
		newOutagesCmd(), newContinueCmd(),
	)
	return root
}

// args wraps a cobra argument rule so that a wrong count is a usage error;
// a word where a command with subcommands expects none is an unknown
// command, with the ones it may mean.
func args(rule cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		err := rule(cmd, a)
		switch {
		case err == nil:
			return nil
		case len(a) > 0 && cmd.HasAvailableSubCommands():
			return unknownCommand(cmd, a[0])
		}
		return usageError{err}
	}
}

// unknownCommand is the usage error of word where cmd expects one of its
// subcommands.
func unknownCommand(cmd *cobra.Command, word string) error {
	return usageError{fmt.Errorf("unknown command %q for %q%s", word, cmd.CommandPath(), didYouMean(cmd, word))}
}

// didYouMean names cmd's subcommands close to word: "; did you mean
// "status"?", or "".
func didYouMean(cmd *cobra.Command, word string) string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default for its suggestions
	}
	near := cmd.SuggestionsFor(word)
	if len(near) == 0 {
		return ""
	}
	for i, n := range near {
		near[i] = strconv.Quote(n)
	}
	return "; did you mean " + strings.Join(near, " or ") + "?"
}

// newHelpCmd is `nudge help [command]`: an unknown command is bad usage.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(cmd *cobra.Command, a []string) error {
			found, rest, err := cmd.Root().Find(a)
			if err != nil || found == nil {
				return usageError{fmt.Errorf("no help for %q: %w", strings.Join(a, " "), err)}
			}
			if len(rest) > 0 {
				return unknownCommand(found, rest[0])
			}
			found.InitDefaultHelpFlag()
			found.InitDefaultVersionFlag()
			return found.Help()
		},
	}
}
