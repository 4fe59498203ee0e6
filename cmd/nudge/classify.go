package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/classify"
	"nudge/internal/safetext"
	"nudge/internal/watch"
)

func newClassifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "classify [--agent NAME] [--json] [--why] FILE...",
		Short: "Read session files offline and print their events",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, files []string) error {
			name, _ := cmd.Flags().GetString("agent")
			asJSON, _ := cmd.Flags().GetBool("json")
			why, _ := cmd.Flags().GetBool("why")
			var forced *classify.Agent
			if name != "" {
				a, ok := classify.Lookup(name)
				if !ok {
					return usageError{fmt.Errorf("unknown agent %q (known: %s)", name, agentNames())}
				}
				forced = &a
			}
			out := cmd.OutOrStdout()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			var tw *tabwriter.Writer
			if !asJSON {
				tw = tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TIME\tAGENT\tSESSION\tKIND\tCLASS\tMESSAGE")
			}
			failed := 0
			for _, file := range files {
				agent, err := agentFor(file, forced)
				if err == nil {
					err = printEvents(cmd.Context(), out, tw, file, agent, why, log)
				}
				if err != nil {
					safetext.Fprintf(cmd.ErrOrStderr(), "nudge: %s: %v\n", file, err)
					failed++
				}
			}
			if tw != nil {
				tw.Flush()
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d files could not be read", failed, len(files))
			}
			return nil
		},
	}
	cmd.Flags().String("agent", "", "the agent that wrote the files ("+agentNames()+"); default: recognised from each file")
	cmd.Flags().Bool("json", false, "one JSON object per event and line")
	cmd.Flags().Bool("why", false, "for each dead turn, the rule and the field that decided its class, and the signals seen")
	return cmd
}

func agentNames() string { return strings.Join(classify.Names(), ", ") }

func agentFor(file string, forced *classify.Agent) (classify.Agent, error) {
	if forced != nil {
		return *forced, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return classify.Agent{}, err
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return classify.Agent{}, err
	}
	a, ok := classify.Recognize(file, head[:n])
	if !ok {
		return classify.Agent{}, fmt.Errorf("cannot tell which agent wrote it; pass --agent")
	}
	return a, nil
}

func printEvents(ctx context.Context, out io.Writer, tw *tabwriter.Writer, file string, agent classify.Agent, why bool, log *slog.Logger) error {
	events, err := watch.ReadFile(ctx, file, agent, log)
	if err != nil {
		return err
	}
	for _, ev := range events {
		if tw == nil {
			if err := safetext.EncodeJSON(out, jsonLine(ev, why), ""); err != nil {
				return err
			}
			continue
		}
		class, msg := "", ""
		if f := ev.Failure; f != nil {
			class, msg = string(f.Class), f.Message
			if !f.ResetAt.IsZero() {
				msg += " (resets " + f.ResetAt.UTC().Format(time.RFC3339) + ")"
			}
		}
		if ev.Kind == classify.UserMessage {
			msg = ev.Text
		}
		if len(msg) > 100 {
			msg = msg[:97] + "..."
		}
		when := "-"
		if !ev.Time.IsZero() {
			when = ev.Time.UTC().Format("2006-01-02T15:04:05Z")
		}
		safetext.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", when, ev.Agent, ev.Session, ev.Kind, class, msg)
		if why && ev.Kind == classify.TurnFailed && ev.Failure != nil {
			// No tab: the line is no cell of the table's columns.
			safetext.Fprintf(tw, "  why: %s\n", whyText(*ev.Failure))
		}
	}
	return nil
}

// whyText is what decided a dead turn's class, in words.
func whyText(f classify.Failure) string {
	s := f.Why()
	if f.ResetUnread != "" {
		s += fmt.Sprintf("; reset unreadable: %q", f.ResetUnread)
	}
	if f.Shape != "" {
		s += "; record shape not known: " + f.Shape
	}
	return s
}

// whyJSON is what decided a dead turn's class, for --json --why.
type whyJSON struct {
	Rule        string   `json:"rule"`
	Field       string   `json:"field,omitempty"`
	Signals     []string `json:"signals,omitempty"`
	ResetUnread string   `json:"reset_unread,omitempty"`
	Shape       string   `json:"shape,omitempty"`
}

// jsonLine is ev's docs/behaviour.md §8 line, with "why" on a dead turn
// when asked.
func jsonLine(ev classify.Event, why bool) any {
	l := ev.Line()
	f := ev.Failure
	if !why || ev.Kind != classify.TurnFailed || f == nil {
		return l
	}
	return struct {
		classify.Line
		Why whyJSON `json:"why"`
	}{l, whyJSON{f.Rule, f.Field, f.Signals, f.ResetUnread, f.Shape}}
}
