package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"

	"github.com/spf13/cobra"

	"nudge/internal/classify"
	"nudge/internal/config"
	"nudge/internal/daemon"
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
	fmt.Fprintf(w, "config:   %s\n", file)
	fmt.Fprintf(w, "data:     %s\n", cfg.DataDir)
	fmt.Fprintf(w, "log:      %s\n", cfg.LogFile())
	if st, err := daemon.NewClient(cfg.DataDir).Status(cmd.Context()); err == nil && st.Daemon != nil {
		fmt.Fprintf(w, "daemon:   running, pid %d, %d files watched\n", st.Daemon.PID, st.Daemon.FilesWatched)
	} else if errors.Is(err, daemon.ErrNotRunning) {
		fmt.Fprintln(w, "daemon:   not running (start it with `nudge run`)")
	} else {
		fmt.Fprintf(w, "daemon:   not answering: %v\n", err)
	}
	fmt.Fprintln(w, "agents:")
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		doctorAgent(w, name, cfg.Agents[name])
	}
	fmt.Fprintln(w, "delivery:")
	if p, err := exec.LookPath("tmux"); err == nil {
		fmt.Fprintf(w, "  tmux:   %s (sessions running inside tmux can be continued)\n", p)
	} else {
		fmt.Fprintln(w, "  tmux:   not installed: no session can be continued yet (other terminals are not supported in this version)")
	}
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
	fmt.Fprintf(w, "  phone:   ntfy %s, webhook %s\n", setOrNot(cfg.Notify.Ntfy.URL), setOrNot(cfg.Notify.Webhook.URL))
	fmt.Fprintln(w, "menu bar: not available in this build (the daemon runs headless)")
}

func doctorAgent(w io.Writer, name string, a config.Agent) {
	if !a.Enabled {
		fmt.Fprintf(w, "  %-9s off in the config\n", name)
		return
	}
	if _, ok := classify.Lookup(name); !ok {
		fmt.Fprintf(w, "  %-9s not supported yet: its sessions are not watched\n", name)
		return
	}
	root := a.Root
	if root == "" {
		root = watch.DefaultRoot(name)
	}
	if _, err := os.Stat(root); err != nil {
		fmt.Fprintf(w, "  %-9s %s does not exist yet (watched for when it appears)\n", name, root)
		return
	}
	fmt.Fprintf(w, "  %-9s watching %s\n", name, root)
}

func setOrNot(url string) string {
	if url == "" {
		return "not set"
	}
	return "set"
}
