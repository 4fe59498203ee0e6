package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"nudge/internal/classify"
	"nudge/internal/config"
	"nudge/internal/daemon"
	"nudge/internal/inbox"
	"nudge/internal/inject"
	"nudge/internal/safetext"
	"nudge/internal/status"
	"nudge/internal/tray"
	"nudge/internal/watch"
)

func newDoctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Say what nudge found and what it cannot do, and why",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			doctor(cmd, cfg)
			return nil
		},
	}
}

func doctor(cmd *cobra.Command, cfg config.Config) {
	w := cmd.OutOrStdout()
	file := cfg.File
	if file == "" {
		file = "none (built-in defaults; " + config.DefaultFile() + " is read when it exists)"
	}
	safetext.Fprintf(w, "config:   %s\n", file)
	safetext.Fprintf(w, "data:     %s\n", cfg.DataDir)
	safetext.Fprintf(w, "log:      %s\n", cfg.LogFile())
	st, err := daemon.NewClient(cfg.DataDir).Status(cmd.Context())
	if err == nil && st.Daemon != nil {
		safetext.Fprintf(w, "daemon:   running, pid %d, %d files watched\n", st.Daemon.PID, st.Daemon.FilesWatched)
		doctorHealth(w, st.Daemon)
	} else if errors.Is(err, daemon.ErrNotRunning) {
		fmt.Fprintln(w, "daemon:   not running (start it with `nudge run`)")
	} else {
		safetext.Fprintf(w, "daemon:   not answering: %v\n", err)
	}
	fmt.Fprintln(w, "agents:")
	for _, name := range agentsOf(cfg) {
		printWatched(w, name, cfg.Agent(name))
		agent, ok := classify.Lookup(name)
		if !ok || !cfg.Agent(name).Enabled {
			continue
		}
		if agent.Blind != "" {
			safetext.Fprintf(w, "  %-9s cannot see: %s\n", "", agent.Blind)
		}
		if agent.ReadComposer == nil {
			safetext.Fprintf(w, "  %-9s cannot see: its prompt on screen; only your keys and modes hold a continuation (docs/behaviour.md §3)\n", "")
		}
	}
	doctorDelivery(cmd.Context(), w, cfg, st.Sessions)
	fmt.Fprintln(w, "notifications:")
	if cfg.Notify.Desktop {
		if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" && os.Getenv("DISPLAY") == "" {
			fmt.Fprintln(w, "  desktop: on, but no desktop session is visible from here (no D-Bus session bus)")
		} else {
			fmt.Fprintln(w, "  desktop: on")
		}
	} else {
		fmt.Fprintln(w, "  desktop: off")
	}
	safetext.Fprintf(w, "  phone:   ntfy %s, webhook %s\n", setOrNot(cfg.Notify.Ntfy.URL), setOrNot(cfg.Notify.Webhook.URL))
	if tray.Available {
		fmt.Fprintln(w, "menu bar: available in this build (`nudge run` shows it when a desktop session is present)")
	} else {
		fmt.Fprintln(w, "menu bar: not available in this build (the daemon runs headless)")
	}
}

// agentsOf are the agents the config names and those of the registry, by
// name: every one of them is watched unless turned off.
func agentsOf(cfg config.Config) []string {
	names := slices.Collect(maps.Keys(cfg.Agents))
	for _, a := range classify.Agents() {
		if _, ok := cfg.Agents[a.Name]; !ok {
			names = append(names, a.Name)
		}
	}
	slices.Sort(names)
	return names
}

// printWatched says which folder of agent name nudge watches, or why none.
func printWatched(w io.Writer, name string, a config.Agent) {
	if !a.Enabled {
		safetext.Fprintf(w, "  %-9s off in the config\n", name)
		return
	}
	if _, ok := classify.Lookup(name); !ok {
		safetext.Fprintf(w, "  %-9s not supported yet: its sessions are not watched\n", name)
		return
	}
	root := a.Root
	if root == "" {
		root = watch.DefaultRoot(name)
	}
	if _, err := os.Stat(root); err != nil {
		safetext.Fprintf(w, "  %-9s %s does not exist yet (watched for when it appears)\n", name, root)
		return
	}
	safetext.Fprintf(w, "  %-9s watching %s\n", name, root)
}

// doctorSessions is how many watched sessions doctor explains.
const doctorSessions = 10

// doctorDelivery says which backends are tried, and for each recently
// watched session which one would deliver a continuation now and why, or
// why none can.
func doctorDelivery(ctx context.Context, w io.Writer, cfg config.Config, live []status.Session) {
	fmt.Fprintln(w, "delivery:")
	order := strings.Join(cfg.Inject.Order, ", ")
	var resume []string
	for _, agent := range slices.Sorted(maps.Keys(cfg.Inject.Resume)) {
		if cfg.Inject.Resume[agent] {
			resume = append(resume, agent)
		}
	}
	inj, err := daemon.NewInjector(cfg, slog.New(slog.DiscardHandler)) // doctor only asks where it would type
	if err != nil {
		safetext.Fprintf(w, "  order:    %s: %v\n", order, err)
		return
	}
	safetext.Fprintf(w, "  order:    %s → %s; headless resume for: %s\n", order, orNone(inj.Backends()), orNone(resume))
	for _, sees := range inj.Sees() {
		safetext.Fprintf(w, "  sees:     %s\n", sees)
	}
	db, ok, err := openInbox(cfg)
	if err != nil {
		safetext.Fprintf(w, "  sessions: cannot read the database: %v\n", err)
		return
	}
	if !ok {
		fmt.Fprintln(w, "  sessions: none seen yet")
		return
	}
	defer db.Close()
	rows, err := db.Sessions(ctx)
	if err != nil {
		safetext.Fprintf(w, "  sessions: cannot read the database: %v\n", err)
		return
	}
	watched := map[string]bool{}
	for _, s := range live {
		watched[s.Agent+"\x00"+s.Session] = true
	}
	if len(live) > 0 {
		rows = slices.DeleteFunc(rows, func(r inbox.SessionRow) bool { return !watched[r.Agent+"\x00"+r.Session] })
	}
	slices.SortFunc(rows, func(a, b inbox.SessionRow) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	if len(rows) == 0 {
		fmt.Fprintln(w, "  sessions: none seen yet")
		return
	}
	for i, row := range rows {
		if i == doctorSessions {
			safetext.Fprintf(w, "  … and %d more sessions\n", len(rows)-i)
			break
		}
		target, findings := daemon.ExplainDelivery(ctx, inj, row)
		doctorSession(w, row, target, findings)
	}
}

// doctorSession prints one session's delivery: the process, the backend
// that would type and where, and why each other backend would not.
func doctorSession(w io.Writer, row inbox.SessionRow, t inject.Target, findings []inject.Finding) {
	proc := fmt.Sprintf("pid %d", t.PID)
	if t.PID == 0 {
		proc = "no live process"
		if t.Unfound != nil {
			proc += " (" + t.Unfound.Error() + ")"
		}
	}
	safetext.Fprintf(w, "  %s %s in %s: %s\n", row.Agent, row.Session, orNone([]string{row.Project}), proc)
	if a, _ := classify.Lookup(row.Agent); a.ReadBy != nil && row.Path != "" {
		safetext.Fprintf(w, "    read by %s\n", a.ReadBy(row.Path))
	}
	used := false
	for _, f := range findings {
		switch {
		case f.Use && f.Err == nil:
			safetext.Fprintf(w, "    would type with %s into %s\n", f.Backend, f.Where)
			used = true
		case f.Use:
			safetext.Fprintf(w, "    %s at %s, but refused: %v\n", f.Backend, f.Where, f.Err)
		case f.Err != nil:
			safetext.Fprintf(w, "    not %s: %v\n", f.Backend, f.Err)
		default:
			safetext.Fprintf(w, "    also %s at %s (not used: an earlier backend wins)\n", f.Backend, f.Where)
		}
	}
	if !used {
		fmt.Fprintln(w, "    no backend can deliver a continuation to this session now")
	}
}

func orNone(ss []string) string {
	ss = slices.DeleteFunc(ss, func(s string) bool { return s == "" })
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}

func setOrNot(url string) string {
	if url == "" {
		return "not set"
	}
	return "set"
}

// doctorHealth says whether the daemon can store what it reads, which
// lines it skipped, and which failure record shapes it does not know.
func doctorHealth(w io.Writer, d *status.Daemon) {
	if f := d.StoreFailing; f != nil {
		safetext.Fprintf(w, "  store:  %s (%d tries)\n", f.Sentence(time.Now()), f.Tries)
	} else {
		fmt.Fprintln(w, "  store:  saving")
	}
	if d.LinesSkipped == 0 {
		fmt.Fprintln(w, "  lines:  none skipped")
	} else {
		fmt.Fprintf(w, "  lines:  %d skipped since start (not JSON records, binary, over the line cap)\n", d.LinesSkipped)
		for _, f := range d.SkippedFiles {
			safetext.Fprintf(w, "          %d in %s, the latest at offset %d: %s\n", f.Lines, f.Path, f.Offset, f.Reason)
		}
	}
	doctorShapes(w, d.UnknownShapes)
}

// doctorShapesShown bounds the shapes doctor lists.
const doctorShapesShown = 20

// doctorShapes counts the dead turns whose failure record shape nudge does
// not know (docs/failures.md), so that a person can report them.
func doctorShapes(w io.Writer, shapes []status.UnknownShape) {
	if len(shapes) == 0 {
		fmt.Fprintln(w, "  shapes: every failure record read since start had a known shape")
		return
	}
	turns := 0
	for _, u := range shapes {
		turns += u.Count
	}
	fmt.Fprintf(w, "  shapes: %d dead turns in %d failure record shapes nudge does not know since start; "+
		"please report them (`nudge classify --why FILE` shows what was read)\n", turns, len(shapes))
	for _, u := range shapes[:min(len(shapes), doctorShapesShown)] {
		safetext.Fprintf(w, "          %d × %s: %s (latest in %s)\n", u.Count, u.Agent, u.Shape, u.Path)
	}
}
