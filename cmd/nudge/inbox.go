package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/inbox"
)

func newInboxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inbox [--json] [--unread]",
		Short: "Show Inbox entries, newest first",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			unread, _ := cmd.Flags().GetBool("unread")
			asJSON, _ := cmd.Flags().GetBool("json")
			entries := []inbox.EntryRow{}
			db, ok, err := openInbox(cfg)
			if err != nil {
				return err
			}
			if ok {
				defer db.Close()
				if entries, err = db.Entries(cmd.Context(), unread); err != nil {
					return err
				}
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), entries)
			}
			if len(entries) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "the Inbox is empty")
				return nil
			}
			for _, e := range entries {
				mark := " "
				if !e.Read {
					mark = "●"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s  %s  %s  %s\n  %s\n", mark, e.Time.Local().Format(time.DateTime), e.Agent, e.Project, e.Session, e.What)
				if e.ErrorText != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "  error: %s\n", e.ErrorText)
				}
			}
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "print JSON")
	cmd.Flags().Bool("unread", false, "only unread entries")
	return cmd
}
