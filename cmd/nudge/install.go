package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"nudge/internal/autostart"
)

func newInstallCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "install",
		Short: "Start nudge at login (LaunchAgent on macOS, systemd user unit on Linux)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := autostart.Current()
			if err != nil {
				return err
			}
			if err := p.Install(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed %s: nudge starts at login and is running now\n", p.File)
			return nil
		},
	}
}

func newUninstallCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "uninstall",
		Short: "Stop starting nudge at login",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := autostart.Current()
			if err != nil {
				return err
			}
			if err := p.Uninstall(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", p.File)
			return nil
		},
	}
}
