package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/classify"
	"nudge/internal/watch"
)

// newHookCmd is the command an agent's hooks run: it appends the hook's
// stdin to a file the daemon reads, and returns at once. Only Grok needs it
// (formats/grok.md §3): Grok writes no record of a failed turn.
func newHookCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "hook grok",
		Short: "Record one Grok hook for the daemon (the command of grok-dev's UserPromptSubmit, Stop and StopFailure hooks)",
		Long: "Reads the hook's JSON from stdin and appends it, with the time it came, to\n" +
			"<grok root>/nudge/hooks/<session>.jsonl, where the daemon reads it.\n" +
			"Set it in ~/.grok/user-settings.json as the command of the UserPromptSubmit,\n" +
			"Stop and StopFailure hooks.",
		Args:      args(cobra.ExactArgs(1)),
		ValidArgs: []string{"grok"},
		RunE: func(cmd *cobra.Command, a []string) error {
			if a[0] != "grok" {
				return usageError{fmt.Errorf("no hook for agent %q (known: grok)", a[0])}
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			root := cfg.Agent("grok").Root
			if root == "" {
				root = watch.DefaultRoot("grok")
			}
			if root == "" {
				return fmt.Errorf("grok hook: no home folder to write to; set agents.grok.root")
			}
			input, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), classify.GrokHookInputMax+1))
			if err != nil {
				return fmt.Errorf("grok hook: read stdin: %w", err)
			}
			path, line, err := classify.GrokHookRecord(input, os.Getenv("GROK_HOOK_EVENT"), root, time.Now())
			if err != nil {
				return err
			}
			return appendLine(path, line)
		},
	}
}

// appendLine adds line to the file at path in one write, creating the file
// and its folder for this user only.
func appendLine(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("hook: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("hook: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("hook: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("hook: close %s: %w", path, err)
	}
	return nil
}
