package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"nudge/internal/config"
	"nudge/internal/private"
	"nudge/internal/safetext"
	"nudge/internal/wrap"
)

func newWrapCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "wrap -- COMMAND [ARGS...]",
		Short: "Run an agent in a terminal nudge can type into",
		Long: `Run COMMAND in a terminal of its own that passes yours through untouched
(keys, colours, window size, signals), so that nudge can type a continuation
into it when a turn dies from a provider error. The exit status is COMMAND's.

This is the way for terminals that offer nudge no scripting API: make it the
habit with an alias in your shell's startup file, for example

    alias claude='nudge wrap -- claude'

Only you can reach the wrapper: it listens on a user-only socket in nudge's
data folder, removed when COMMAND exits.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			dataDir, log, closeLog := wrapSetup(cmd)
			code, err := wrap.Run(wrap.Options{
				Command: argv, DataDir: dataDir, Log: log,
				Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
			})
			closeLog()
			if err != nil {
				return err
			}
			os.Exit(code) // COMMAND's status; wrap.Run has restored the terminal and removed the socket
			return nil
		},
	}
	// Everything after COMMAND is COMMAND's own, flags included.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// wrapSetup finds the data folder and the log file. A broken config
// does not stop the agent from running: the wrapper says so and goes on
// with the defaults.
func wrapSetup(cmd *cobra.Command) (dataDir string, log *slog.Logger, closeLog func()) {
	discard := slog.New(slog.DiscardHandler)
	cfg, err := loadConfig(cmd)
	if err != nil {
		safetext.Fprintf(os.Stderr, "nudge wrap: %v (going on with the defaults)\n", err)
		return config.DataDir(), discard, func() {}
	}
	// The log file only: the terminal belongs to the agent.
	f, err := openLogFile(cfg)
	if err != nil {
		safetext.Fprintf(os.Stderr, "nudge wrap: log: %v\n", err)
		return cfg.DataDir, discard, func() {}
	}
	log = slog.New(slog.NewJSONHandler(f, nil)).With("wrapper", os.Getpid())
	return cfg.DataDir, log, func() { _ = f.Close() }
}

// openLogFile opens the log file for appending, in a folder of this user
// alone (the data folder, when the log lives there), never through a link.
func openLogFile(cfg config.Config) (*os.File, error) {
	path := cfg.LogFile()
	folder := "log folder"
	if filepath.Dir(path) == filepath.Clean(cfg.DataDir) {
		folder = "data folder"
	}
	if err := private.Folder(folder, filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := private.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	return f, nil
}
