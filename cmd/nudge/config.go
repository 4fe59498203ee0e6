package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/config"
	"nudge/internal/daemon"
	"nudge/internal/inject"
	"nudge/internal/safetext"
	"nudge/internal/status"
	"nudge/internal/watch"
	"nudge/internal/web"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config [--json]",
		Short: "Show the settings in effect and where each came from",
		Long: "Show every setting in effect and where its value came from: the built-in default, the config file, a NUDGE_* variable or a flag.\n" +
			"With a daemon running, also the toggles flipped from the menu or the CLI, which win over the file.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			toggles, err := runningToggles(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return printJSON(cmd.OutOrStdout(), configView{File: cfg.File, Settings: cfg.Settings, Problems: nonNil(cfg.Problems), Toggles: toggles})
			}
			printConfig(cmd.OutOrStdout(), cfg, toggles)
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "print one JSON object")
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Check the config file and NUDGE_* variables; exit 1 on a key that is no setting or a value nudge run would refuse",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			problems := cfg.Problems
			// The values checked where they are used, as `nudge run` does.
			for _, err := range []error{inject.CheckOrder(cfg.Inject.Order), web.CheckAddr(cfg.Web.Addr), watch.CheckEvents(cfg.Watch.Events)} {
				if err != nil {
					problems = append(problems, err.Error())
				}
			}
			if len(problems) > 0 {
				for _, p := range problems {
					safetext.Fprintf(cmd.ErrOrStderr(), "  %s\n", p)
				}
				return fmt.Errorf("%d problem(s) in the settings, listed above", len(problems))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %s\n", configSource(cfg))
			return nil
		},
	})
	return cmd
}

// configView is what `nudge config --json` prints.
type configView struct {
	File     string           `json:"file"` // "" when no file is read
	Settings []config.Setting `json:"settings"`
	Problems []string         `json:"problems"`
	Toggles  *status.Settings `json:"toggles"` // null when no daemon runs
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// runningToggles are the toggles of the running daemon, nil when none runs.
func runningToggles(ctx context.Context, cfg config.Config) (*status.Settings, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := daemon.NewClient(cfg.DataDir).Status(ctx)
	if errors.Is(err, daemon.ErrNotRunning) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return st.Settings, nil
}

func configSource(cfg config.Config) string {
	if cfg.File == "" {
		return "no config file (" + config.DefaultFile() + " does not exist): built-in defaults"
	}
	return "config file " + cfg.File
}

func printConfig(w io.Writer, cfg config.Config, toggles *status.Settings) {
	fmt.Fprintln(w, configSource(cfg))
	fmt.Fprintf(w, "data folder %s\n", cfg.DataDir)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tFROM\tVALUE")
	for _, s := range cfg.Settings {
		from := s.Origin
		if s.Via != "" && s.Origin != config.FromFile {
			from += " " + s.Via
		}
		value := settingValue(s.Value)
		if agent, ok := strings.CutSuffix(strings.TrimPrefix(s.Key, "agents."), ".root"); ok && value == `""` {
			value += " (the agent's own: " + watch.DefaultRoot(agent) + ")"
		}
		if s.Key == "log.file" && value == `""` {
			value += " (" + cfg.LogFile() + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, from, value)
	}
	tw.Flush()
	if toggles != nil {
		fmt.Fprintf(w, "\nToggles of the running daemon (flipped from the menu or the CLI; they win over the file):\n"+
			"  retry after API errors: %s\n  continue after usage limit: %s\n  paused: %s\n",
			onOff(toggles.RetryEnabled), onOff(toggles.ContinueAfterUsageLimit), yesNo(toggles.Paused))
	}
	if len(cfg.Problems) > 0 {
		fmt.Fprintf(w, "\nIgnored:\n  %s\n", strings.Join(cfg.Problems, "\n  "))
	}
}

// settingValue shows a value on one line; an empty string shows as "".
func settingValue(v any) string {
	switch v := v.(type) {
	case string:
		if v == "" {
			return `""`
		}
		return v
	case []any:
		parts := make([]string, len(v))
		for i, p := range v {
			parts[i] = fmt.Sprint(p)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
