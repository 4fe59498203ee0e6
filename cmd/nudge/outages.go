package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/classify"
	"nudge/internal/daemon"
	"nudge/internal/outage"
	"nudge/internal/safetext"
)

// newOutagesCmd is `nudge outages [--json]`: the stored provider outages,
// the newest first (docs/behaviour.md §9).
func newOutagesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "outages",
		Short: "List the providers' outages: when, which sessions, what they said",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			out := []outage.Outage{}
			db, ok, err := openInbox(cfg)
			if err != nil {
				return err
			}
			if ok {
				defer db.Close()
				rows, err := db.Outages(cmd.Context(), false)
				if err != nil {
					return err
				}
				for _, r := range rows {
					var o outage.Outage
					if err := json.Unmarshal(r.Outage, &o); err != nil {
						return fmt.Errorf("outage of %s since %s: %w", r.Provider, r.Start, err)
					}
					out = append(out, o)
				}
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), out)
			}
			if len(out) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no outage seen")
				return nil
			}
			for _, o := range out {
				printOutage(cmd, o)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outages as a JSON array")
	return cmd
}

// printOutage prints one outage: its provider and time, how its sessions
// fared, and its first error text.
func printOutage(cmd *cobra.Command, o outage.Outage) {
	end := "lasting"
	switch {
	case o.GaveUp:
		end = o.End.Local().Format(time.TimeOnly) + " (given up)"
	case !o.Open():
		end = o.End.Local().Format(time.TimeOnly)
	}
	var continued, gaveUp int
	for _, m := range o.Members {
		switch {
		case m.GaveUp:
			gaveUp++
		case m.Continued:
			continued++
		}
	}
	w := cmd.OutOrStdout()
	safetext.Fprintf(w, "%s  %s – %s  %d sessions: %d continued after it, %d given up\n", classify.ProviderTitle(o.Provider),
		o.Start.Local().Format(time.DateTime), end, len(o.Members), continued, gaveUp)
	if len(o.Errors) > 0 {
		safetext.Fprintf(w, "  error: %s\n", o.Errors[0])
	}
}

// newContinueCmd is `nudge continue --all [--provider P]`: every session
// waiting for an outage to end is continued now.
func newContinueCmd() *cobra.Command {
	var all bool
	var provider string
	cmd := &cobra.Command{
		Use:   "continue --all [--provider P]",
		Short: "Continue now every session that waits for a provider's outage to end",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !all {
				return usageError{errors.New("continue needs --all: it continues every session waiting for an outage")}
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			n, err := daemon.NewClient(cfg.DataDir).ContinueAll(cmd.Context(), provider)
			if errors.Is(err, daemon.ErrNotRunning) {
				return fmt.Errorf("%w: the outages are the running daemon's; start it with `nudge run`", err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "continuing %d waiting sessions, %s apart\n", n, outage.Spacing)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every waiting session")
	cmd.Flags().StringVar(&provider, "provider", "", "only those waiting for this provider (its id: anthropic, openai, …)")
	return cmd
}
