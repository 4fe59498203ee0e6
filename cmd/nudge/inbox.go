package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/classify"
	"nudge/internal/config"
	"nudge/internal/daemon"
	"nudge/internal/inbox"
	"nudge/internal/safetext"
	"nudge/internal/web"
)

func newInboxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inbox [--json] [--unread] [--url] [--open]",
		Short: "Show Inbox entries, newest first; open the Inbox window",
		Long: `Show Inbox entries, newest first.

With --url, print a sign-in link to the Inbox window: it lets one page
load in, once, within 5 minutes. With --open, open the Inbox window in the
default browser. Both ask the running daemon.

The subcommands change entries: "nudge inbox read ID..." marks entries read,
"nudge inbox read-all" marks every entry read, "nudge inbox clear" removes
them all. ID is the number after "#" in "nudge inbox" (the "id" of --json).`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneOf(cmd, "url", "open", "json"); err != nil {
				return err
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if show, _ := cmd.Flags().GetBool("url"); show {
				url, err := servedURL(cmd.Context(), cfg)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), url)
				return nil
			}
			if open, _ := cmd.Flags().GetBool("open"); open {
				return openInboxWindow(cmd.Context(), cfg)
			}
			unread, _ := cmd.Flags().GetBool("unread")
			asJSON, _ := cmd.Flags().GetBool("json")
			return listEntries(cmd, cfg, unread, asJSON)
		},
	}
	cmd.Flags().Bool("json", false, "print JSON")
	cmd.Flags().Bool("unread", false, "only unread entries")
	cmd.Flags().Bool("url", false, "print a one-time sign-in link to the Inbox window")
	cmd.Flags().Bool("open", false, "open the Inbox window in the default browser")
	cmd.AddCommand(
		&cobra.Command{
			Use:   "read ID...",
			Short: "Mark Inbox entries read",
			Args:  args(cobra.MinimumNArgs(1)),
			RunE: func(cmd *cobra.Command, a []string) error {
				ids := make([]int64, len(a))
				for i, s := range a {
					id, err := strconv.ParseInt(s, 10, 64)
					if err != nil {
						return usageError{fmt.Errorf("entry id %q is not a number", s)}
					}
					ids[i] = id
				}
				return changeInbox(cmd, func(ctx context.Context, c inboxChanger) error {
					for _, id := range ids {
						if err := c.MarkRead(ctx, id); err != nil {
							if errors.Is(err, inbox.ErrNotFound) {
								return fmt.Errorf("no Inbox entry %d", id)
							}
							return err
						}
					}
					return nil
				})
			},
		},
		&cobra.Command{
			Use:   "read-all",
			Short: "Mark every Inbox entry read",
			Args:  args(cobra.NoArgs),
			RunE: func(cmd *cobra.Command, _ []string) error {
				return changeInbox(cmd, func(ctx context.Context, c inboxChanger) error { return c.MarkAllRead(ctx) })
			},
		},
		&cobra.Command{
			Use:   "clear",
			Short: "Remove every Inbox entry",
			Args:  args(cobra.NoArgs),
			RunE: func(cmd *cobra.Command, _ []string) error {
				return changeInbox(cmd, func(ctx context.Context, c inboxChanger) error { return c.Clear(ctx) })
			},
		},
	)
	return cmd
}

// oneOf is a usage error when more than one of the flags is set.
func oneOf(cmd *cobra.Command, flags ...string) error {
	var set []string
	for _, f := range flags {
		if cmd.Flags().Changed(f) {
			set = append(set, "--"+f)
		}
	}
	if len(set) > 1 {
		return usageError{fmt.Errorf("%s cannot be used together", strings.Join(set, " and "))}
	}
	return nil
}

// listEntries prints the Inbox entries; --json gives the same entries as
// the Inbox window's API (web.Entry), an empty array when there are none.
func listEntries(cmd *cobra.Command, cfg config.Config, unread, asJSON bool) error {
	var entries []inbox.EntryRow
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
		out := make([]web.Entry, len(entries))
		for i, e := range entries {
			out[i] = web.NewEntry(e)
		}
		return printJSON(cmd.OutOrStdout(), out)
	}
	if len(entries) == 0 {
		fmt.Fprintln(cmd.OutOrStdout(), "the Inbox is empty")
		return nil
	}
	for _, e := range entries {
		printEntry(cmd.OutOrStdout(), e)
	}
	return nil
}

// continued begins every line of an entry's error text after its first,
// so that a text of many lines, which is the agent's, cannot pass a line
// of its own for another entry.
const continued = "  │ "

// printEntry prints one Inbox entry for a person's terminal: a line of
// when, which session and whether read; what happened; the error text line
// by line, each one plain.
func printEntry(w io.Writer, e inbox.EntryRow) {
	mark := " "
	if !e.Read {
		mark = "●"
	}
	safetext.Fprintf(w, "%s %s  #%d  %s  %s  %s\n  %s\n", mark, e.Time.Local().Format(time.DateTime), e.ID, e.Agent, e.Project, e.Session, e.What)
	if on := (classify.Failure{Provider: e.Provider, Model: e.Model}).On(); on != "" {
		safetext.Fprintf(w, "  %s\n", on)
	}
	if e.ErrorText == "" {
		return
	}
	label := "  error: "
	for _, line := range strings.Split(strings.TrimRight(e.ErrorText, "\n"), "\n") {
		safetext.Fprintf(w, "%s%s\n", label, line)
		label = continued
	}
}

// inboxChanger is what the change subcommands need: the running daemon
// (so that an open Inbox window shows the change at once), or the database
// itself when no daemon runs.
type inboxChanger interface {
	MarkRead(context.Context, int64) error
	MarkAllRead(context.Context) error
	Clear(context.Context) error
}

func changeInbox(cmd *cobra.Command, change func(context.Context, inboxChanger) error) error {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return err
	}
	if err := change(cmd.Context(), daemon.NewClient(cfg.DataDir)); !errors.Is(err, daemon.ErrNotRunning) {
		return err
	}
	db, ok, err := openInbox(cfg)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("the Inbox is empty: nudge has not recorded anything yet")
	}
	defer db.Close()
	return change(cmd.Context(), db)
}

// servedURL is a one-time sign-in link to the running Inbox window, as
// the daemon gives it over its control socket.
func servedURL(ctx context.Context, cfg config.Config) (string, error) {
	link, err := daemon.NewClient(cfg.DataDir).InboxLaunch(ctx)
	if err != nil {
		return "", fmt.Errorf("the Inbox window: %w", err)
	}
	return link, nil
}

// openInboxWindow opens the Inbox window in the default browser, signed
// in, without a shell and without the sign-in link on any command line.
// Where no browser can be opened, it says how to open the window instead.
func openInboxWindow(ctx context.Context, cfg config.Config) error {
	link, err := servedURL(ctx, cfg)
	if err != nil {
		return err
	}
	err = web.OpenWindow(cfg.DataDir, link)
	if errors.Is(err, web.ErrCannotOpen) {
		return fmt.Errorf("the Inbox window: %w; run `nudge inbox --url` and open the link it prints in a browser on this machine within 5 minutes", err)
	}
	return err
}
