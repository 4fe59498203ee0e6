package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"nudge/internal/config"
	"nudge/internal/daemon"
	"nudge/internal/tray"
	"nudge/internal/web"
)

func newRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [--headless] [--config FILE]",
		Short: "Run the daemon (menu-bar icon unless --headless or no display)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			log, closeLog, err := openLog(cfg)
			if err != nil {
				return err
			}
			defer closeLog()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			d, err := daemon.New(cfg, log)
			if err != nil {
				return err
			}
			headless, _ := cmd.Flags().GetBool("headless")
			if headless {
				log.Info("tray: off (--headless)")
				return runDaemon(ctx, d, log)
			}
			return runWithTray(ctx, cfg, d, log)
		},
	}
	cmd.Flags().Bool("headless", false, "run without the menu-bar icon")
	cmd.Flags().String("web-addr", "", "address of the Inbox window (overrides web.addr)")
	cmd.Flags().String("log-level", "", "debug, info, warn or error (overrides log.level)")
	cmd.Flags().String("log-file", "", "log file (overrides log.file)")
	return cmd
}

// runWithTray shows the menu-bar icon on this (the main) goroutine while
// the daemon runs on another (PLATFORM.md §2). The icon goes once the
// daemon has stopped (Quit from the menu or the CLI, SIGTERM, a failure);
// without a display or session bus the daemon runs headless.
func runWithTray(ctx context.Context, cfg config.Config, d *daemon.Daemon, log *slog.Logger) error {
	trayCtx, stopTray := context.WithCancel(context.Background())
	defer stopTray()
	done := make(chan error, 1)
	go func() {
		done <- runDaemon(ctx, d, log)
		stopTray()
	}()
	err := tray.Run(trayCtx, tray.Spec{
		Status:  d.Status,
		Changed: d.Changed,
		Change:  d.Change,
		Unread:  d.Unread,
		OpenInbox: func() error {
			if _, err := d.InboxURL(); err != nil {
				return err
			}
			return web.OpenWindow(cfg.DataDir)
		},
		Quit: d.Quit,
		Log:  log,
	})
	if err != nil {
		log.Info(err.Error() + "; running headless")
	}
	return <-done
}

func runDaemon(ctx context.Context, d *daemon.Daemon, log *slog.Logger) error {
	if err := d.Run(ctx); err != nil {
		log.Error("daemon stopped", "err", err)
		return err
	}
	return nil
}

func loadConfig(cmd *cobra.Command) (config.Config, error) {
	file, _ := cmd.Flags().GetString("config")
	return config.Load(file, cmd.Flags())
}

// openLog logs to the platform's log file and to stderr.
func openLog(cfg config.Config) (*slog.Logger, func(), error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(cfg.Log.Level))); err != nil {
		return nil, nil, usageError{fmt.Errorf("log.level %q: %w", cfg.Log.Level, err)}
	}
	path := cfg.LogFile()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("log folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	log := slog.New(slog.NewMultiHandler(slog.NewJSONHandler(f, opts), slog.NewTextHandler(os.Stderr, opts)))
	return log, func() { f.Close() }, nil
}
