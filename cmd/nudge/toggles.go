package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/daemon"
	"nudge/internal/status"
)

type changeReq = status.SettingsChange

func newToggleCmd(name, short string, set func(*changeReq, bool)) *cobra.Command {
	return &cobra.Command{
		Use:       name + " on|off",
		Short:     short,
		Args:      args(cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs)),
		ValidArgs: []string{"on", "off"},
		RunE: func(cmd *cobra.Command, a []string) error {
			var ch changeReq
			set(&ch, a[0] == "on")
			return change(cmd, ch)
		},
	}
}

func newPauseCmd(name string, paused bool) *cobra.Command {
	short := "Stop acting on sessions (keep watching)"
	if !paused {
		short = "Act on sessions again after a pause"
	}
	return &cobra.Command{
		Use:   name,
		Short: short,
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return change(cmd, changeReq{Paused: &paused})
		},
	}
}

func change(cmd *cobra.Command, ch changeReq) error {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return err
	}
	s, err := daemon.NewClient(cfg.DataDir).Change(cmd.Context(), ch)
	if errors.Is(err, daemon.ErrNotRunning) {
		return fmt.Errorf("%w: the toggles are the running daemon's; start it with `nudge run`, then flip this one", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "retry after API errors: %s · continue after usage limit: %s · paused: %s\n",
		onOff(s.RetryEnabled), onOff(s.ContinueAfterUsageLimit), map[bool]string{true: "yes", false: "no"}[s.Paused])
	return nil
}

// quitWait bounds how long `nudge quit` waits for the daemon to stop: its
// own stop steps are bounded by a few seconds each (notifications sent,
// control socket closed).
const quitWait = 15 * time.Second

func newQuitCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "quit",
		Short: "Stop the running daemon; returns once it has stopped",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if err := daemon.NewClient(cfg.DataDir).Quit(cmd.Context()); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), quitWait)
			defer cancel()
			return daemon.WaitStopped(ctx, cfg.DataDir)
		},
	}
}
