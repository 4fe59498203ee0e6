package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"nudge/internal/autostart"
	"nudge/internal/config"
	"nudge/internal/daemon"
	"nudge/internal/tray"
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
			logs, err := openLog(cfg)
			if err != nil {
				return err
			}
			defer logs.close()
			for _, p := range cfg.Problems {
				logs.log.Warn("config: ignored; `nudge config check` lists these", "problem", p)
			}
			service, _ := cmd.Flags().GetBool(autostart.ServiceFlag)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			d, err := daemon.New(cfg, logs.log)
			if err == nil {
				d.OnSettled(func() { oneCore(logs.log) })
			}
			switch headless, _ := cmd.Flags().GetBool("headless"); {
			case err != nil:
			case headless:
				logs.log.Info("tray: off (--headless)")
				err = d.Run(ctx)
			default:
				err = runWithTray(ctx, d, logs.log)
			}
			if err != nil && !errors.Is(err, daemon.ErrAlreadyRunning) {
				// Into the file only: main prints it once on stderr. A
				// refused second daemon writes nothing into the log of
				// the one that runs.
				logs.file.Error("daemon stopped", "err", err)
			}
			if service && errors.Is(err, daemon.ErrAlreadyRunning) {
				// Started at login while a nudge runs already: not a
				// failure, so the service manager does not restart it.
				fmt.Fprintf(cmd.ErrOrStderr(), "nudge: %v; this one exits\n", err)
				return nil
			}
			return err
		},
	}
	cmd.Flags().Bool("headless", false, "run without the menu-bar icon")
	cmd.Flags().Bool(autostart.ServiceFlag, false, "started by the login service: exit 0 when nudge is already running")
	cmd.Flags().String("web-addr", "", "address of the Inbox window (overrides web.addr)")
	cmd.Flags().String("log-level", "", "debug, info, warn or error (overrides log.level)")
	cmd.Flags().String("log-file", "", "log file (overrides log.file)")
	return cmd
}

// runWithTray shows the menu-bar icon on this (the main) goroutine while
// the daemon runs on another (docs/platform.md §2). The icon goes once the
// daemon has stopped (Quit from the menu or the CLI, SIGTERM, a failure);
// without a display or session bus the daemon runs headless.
func runWithTray(ctx context.Context, d *daemon.Daemon, log *slog.Logger) error {
	trayCtx, stopTray := context.WithCancel(context.Background())
	defer stopTray()
	done := make(chan error, 1)
	go func() {
		done <- d.Run(ctx)
		stopTray()
	}()
	err := tray.Run(trayCtx, tray.Spec{
		Status:      d.Status,
		Changed:     d.Changed,
		Change:      d.Change,
		Unread:      d.Unread,
		OpenInbox:   d.OpenInbox,
		ContinueAll: d.ContinueAll,
		Quit:        d.Quit,
		Log:         log,
	})
	if err != nil {
		log.Info(err.Error() + "; running headless")
	}
	return <-done
}

func loadConfig(cmd *cobra.Command) (config.Config, error) {
	file, _ := cmd.Flags().GetString("config")
	return config.Load(file, cmd.Flags())
}

// daemonLogs are the daemon's loggers: log writes to the platform's log
// file and to stderr, file to the file only. Every line names the pid, so
// the lines of two processes sharing the file can be told apart.
type daemonLogs struct {
	log, file *slog.Logger
	close     func()
}

func openLog(cfg config.Config) (daemonLogs, error) {
	f, err := openLogFile(cfg)
	if err != nil {
		return daemonLogs{}, err
	}
	opts := &slog.HandlerOptions{Level: cfg.LogLevel()}
	file := slog.NewJSONHandler(f, opts).WithAttrs([]slog.Attr{slog.Int("pid", os.Getpid())})
	return daemonLogs{
		log:   slog.New(slog.NewMultiHandler(file, slog.NewTextHandler(os.Stderr, opts))),
		file:  slog.New(file),
		close: func() { f.Close() },
	}, nil
}

// oneCore runs the daemon on one core once its first scan is done, unless
// GOMAXPROCS says otherwise. What is left is following agents' files, a
// few records at a time: with more than one core for Go code, each record
// read wakes a second thread to share work there is too little of: a
// tenth of a busy daemon's CPU, side by side (docs/performance.md §2).
func oneCore(log *slog.Logger) {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	was := runtime.GOMAXPROCS(1)
	log.Debug("first scan done; Go code now runs on one core", "before", was)
}
