package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/classify"
	"nudge/internal/private"
	"nudge/internal/watch"
	"nudge/internal/watch/agentdb"
)

// newHookCmd is the command an agent's hooks run (classify.Agent.Hook): it
// appends the hook's stdin to a file the daemon reads, and returns at once.
// Only Grok needs one (docs/agents/grok.md §3): Grok writes no record of a
// failed turn.
func newHookCmd() *cobra.Command {
	names := hookAgents()
	return &cobra.Command{
		Use:   "hook " + strings.Join(names, "|"),
		Short: "Record one Grok hook for the daemon (the command of grok-dev's UserPromptSubmit, Stop and StopFailure hooks)",
		Long: "Reads the hook's JSON from stdin and appends it, with the time it came, to\n" +
			"<grok root>/nudge/hooks/<session>.jsonl, where the daemon reads it.\n" +
			"Set it in ~/.grok/user-settings.json as the command of the UserPromptSubmit,\n" +
			"Stop and StopFailure hooks.",
		Args:      args(cobra.ExactArgs(1)),
		ValidArgs: names,
		RunE: func(cmd *cobra.Command, a []string) error {
			agent, ok := classify.Lookup(a[0])
			if !ok || agent.Hook == nil {
				return usageError{fmt.Errorf("no hook for agent %q (known: %s)", a[0], strings.Join(names, ", "))}
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			root := cfg.Agent(agent.Name).Root
			if root == "" {
				root = watch.DefaultRoot(agent.Name)
			}
			if root == "" {
				return fmt.Errorf("%s hook: no home folder to write to; set agents.%s.root", agent.Name, agent.Name)
			}
			input, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), classify.HookInputMax+1))
			if err != nil {
				return fmt.Errorf("%s hook: read stdin: %w", agent.Name, err)
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			h := agent.Hook
			count := func(session string) (int, error) {
				if h.CountQuery == "" {
					return 0, errors.New("no count")
				}
				n, err := agentdb.Count(cmd.Context(), filepath.Join(root, h.CountDB), h.CountQuery, session)
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					log.Warn(agent.Name+" hook: count unknown", "db", h.CountDB, "err", err)
				}
				return n, err
			}
			file, line, err := h.Record(input, os.Getenv(h.EventVar), time.Now(), count)
			if err != nil {
				return err
			}
			return appendLine(filepath.Join(root, filepath.FromSlash(file)), line)
		},
	}
}

// hookAgents names the agents with a hook command.
func hookAgents() []string {
	var names []string
	for _, a := range classify.Agents() {
		if a.Hook != nil {
			names = append(names, a.Name)
		}
	}
	return names
}

// appendLine adds line to the file at path in one write, creating the file
// and its folder for this user only. The folder is held to the data
// folder's rules and the file is never a link or a FIFO (private).
func appendLine(path string, line []byte) error {
	if err := private.Folder("hook folder", filepath.Dir(path)); err != nil {
		return fmt.Errorf("hook: %w", err)
	}
	f, err := private.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
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
