package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"nudge/internal/daemon"
	"nudge/internal/mcp"
	"nudge/internal/version"
)

func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp [--allow-toggles]",
		Short: "Serve nudge's sessions and Inbox to an agent (Model Context Protocol over stdio)",
		Long: `Serve nudge's sessions and Inbox to a parent agent as a Model Context
Protocol server on standard input and output: list_sessions, get_session
(state, last turn, timeline), list_inbox, and wait (until a session's turn
ends: done, failed with its cause and error text, or usage-limited).

Read-only: the database is opened read-only, and the daemon's toggles can be
flipped (set_toggles) only with --allow-toggles. wait needs the daemon
running; the other tools answer from the database when it is not.

Claude Code: claude mcp add nudge -- nudge mcp`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			toggles, _ := cmd.Flags().GetBool("allow-toggles")
			// Standard output carries the protocol: the log goes to stderr only.
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			return mcp.Run(cmd.Context(), mcp.Options{
				DataDir: cfg.DataDir, Daemon: daemon.NewClient(cfg.DataDir), NotRunning: daemon.ErrNotRunning, Stored: daemon.StoredSessions,
				AllowToggles: toggles, Version: version.String(), Log: log,
			})
		},
	}
	cmd.Flags().Bool("allow-toggles", false, "also offer set_toggles (retry, continue after usage limit, pause)")
	return cmd
}
