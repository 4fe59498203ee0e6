package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/autostart"
	"nudge/internal/daemon"
)

func newInstallCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "install",
		Short: "Start nudge at login (LaunchAgent on macOS, systemd user unit on Linux)",
		Long: "Start nudge at login (LaunchAgent on macOS, systemd user unit on Linux), with the --config file and the NUDGE_* variables in use now.\n" +
			"Running it again updates the service; a nudge already running keeps running.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			file, _ := cmd.Flags().GetString("config")
			p, err := autostart.Current(file)
			if err != nil {
				return err
			}
			pid, err := runningDaemon(cmd)
			if err != nil {
				return err
			}
			outcome, err := p.Install(pid != 0)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch outcome {
			case autostart.Unchanged:
				fmt.Fprintf(out, "already installed (%s): nudge starts at login and is running now\n", p.File)
			case autostart.StartsAtLogin:
				fmt.Fprintf(out, "installed %s: nudge starts at login; the nudge running now (pid %d) keeps running until then\n", p.File, pid)
			default:
				fmt.Fprintf(out, "installed %s: nudge starts at login and is running now\n", p.File)
			}
			return nil
		},
	}
}

// runningDaemon returns the pid of the daemon running for this user's data
// folder, 0 when none runs.
func runningDaemon(cmd *cobra.Command) (int, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
	defer cancel()
	st, err := daemon.NewClient(cfg.DataDir).Status(ctx)
	if errors.Is(err, daemon.ErrNotRunning) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("is nudge running? %w", err)
	}
	if st.Daemon == nil {
		return 0, nil
	}
	return st.Daemon.PID, nil
}

func newUninstallCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "uninstall",
		Short: "Stop starting nudge at login",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := autostart.Current("")
			if err != nil {
				return err
			}
			outcome, err := p.Uninstall()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch outcome {
			case autostart.NotInstalled:
				fmt.Fprintf(out, "not installed: %s does not exist\n", p.File)
			case autostart.RemovedNoReach:
				fmt.Fprintf(out, "removed %s (%s, so nothing was stopped)\n", p.File, p.NoManager)
			default:
				fmt.Fprintf(out, "removed %s: nudge no longer starts at login\n", p.File)
			}
			return nil
		},
	}
}
