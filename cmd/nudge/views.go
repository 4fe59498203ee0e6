package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/config"
	"nudge/internal/daemon"
	"nudge/internal/explain"
	"nudge/internal/inbox"
	"nudge/internal/private"
	"nudge/internal/safetext"
	"nudge/internal/status"
)

func newStatusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status [--json]",
		Short: "Show the watched sessions and their state",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			st, err := currentStatus(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return printJSON(cmd.OutOrStdout(), st)
			}
			printStatus(cmd.OutOrStdout(), st, cfg)
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "print one JSON object")
	return cmd
}

// currentStatus asks the running daemon; with none running it shows the
// stored sessions and daemon: null.
func currentStatus(ctx context.Context, cfg config.Config) (status.Status, error) {
	st, err := daemon.NewClient(cfg.DataDir).Status(ctx)
	if err == nil {
		return st, nil
	}
	if !errors.Is(err, daemon.ErrNotRunning) {
		return st, err
	}
	st = status.Status{Sessions: []status.Session{}}
	db, ok, err := openInbox(cfg)
	if err != nil || !ok {
		return st, err
	}
	defer db.Close()
	rows, err := db.Sessions(ctx)
	if err != nil {
		return st, err
	}
	st.Sessions = daemon.StoredSessions(rows, time.Now())
	return st, nil
}

func printStatus(w io.Writer, st status.Status, cfg config.Config) {
	if d := st.Daemon; d != nil {
		ready := "scanning"
		if d.Ready {
			ready = "ready"
		}
		safetext.Fprintf(w, "nudge %s running (pid %d) since %s, %s; %d files watched, %d open\n",
			d.Version, d.PID, d.StartedAt.Local().Format(time.DateTime), ready, d.FilesWatched, d.FilesOpen)
		if f := d.StoreFailing; f != nil {
			safetext.Fprintf(w, "WARNING: %s\n", f.Sentence(time.Now()))
		}
		for _, st := range d.Stuck {
			safetext.Fprintf(w, "WARNING: not read since %s: %s: %s\n", st.Since.Local().Format(time.TimeOnly), st.Source, st.Error)
		}
		if d.LinesSkipped > 0 {
			fmt.Fprintf(w, "%d bad lines skipped since start (`nudge doctor` lists the files)\n", d.LinesSkipped)
		}
	} else {
		fmt.Fprintln(w, "nudge is not running")
	}
	if s := st.Settings; s != nil {
		safetext.Fprintf(w, "retry after API errors: %s · continue after usage limit: %s%s\n", onOff(s.RetryEnabled), onOff(s.ContinueAfterUsageLimit), map[bool]string{true: " · PAUSED"}[s.Paused])
	}
	for _, o := range st.Outages {
		safetext.Fprintf(w, "%s\n", o.Line())
	}
	switch {
	case len(st.Sessions) == 0 && st.Daemon != nil:
		fmt.Fprintln(w, "no session active in the last 24 hours; nudge watches these folders for them:")
		for _, name := range agentsOf(cfg) {
			printWatched(w, name, cfg.Agent(name))
		}
		return
	case len(st.Sessions) == 0:
		fmt.Fprintln(w, "no sessions seen yet")
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tSESSION\tPROJECT\tSTATE")
	for _, s := range st.Sessions {
		safetext.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Agent, s.Session, s.Project, describeState(s))
	}
	tw.Flush()
}

func describeState(s status.Session) string {
	out := s.StateWords
	switch {
	case s.RetryAt != nil && s.State == "retrying":
		out = fmt.Sprintf("retrying in %s", max(time.Until(*s.RetryAt), 0).Round(time.Second))
	case s.ResetAt != nil:
		out = "usage limit until " + s.ResetAt.Local().Format(time.DateTime)
	}
	if s.Note != "" {
		out += " — " + s.Note
	}
	return out
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func newExplainCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain SESSION [--json]",
		Short: "Show one session's timeline: events, decisions, attempts",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			db, ok, err := openInbox(cfg)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("no session %q: nudge has not recorded anything yet", a[0])
			}
			defer db.Close()
			t, err := explain.Load(cmd.Context(), db, a[0])
			if errors.Is(err, explain.ErrAmbiguous) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return printJSON(cmd.OutOrStdout(), t)
			}
			t.Print(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "print one JSON object")
	return cmd
}

// openInbox opens the database if it exists; ok is false when nudge never
// ran. A data folder others could change is not read.
func openInbox(cfg config.Config) (*inbox.DB, bool, error) {
	path := filepath.Join(cfg.DataDir, "nudge.db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err := private.Check("data folder", cfg.DataDir); err != nil {
		return nil, false, err
	}
	db, err := inbox.Open(path)
	if err != nil {
		return nil, false, err
	}
	return db, true, nil
}

// printJSON prints v as indented JSON that cannot steer a terminal.
func printJSON(w io.Writer, v any) error {
	return safetext.EncodeJSON(w, v, "  ")
}
