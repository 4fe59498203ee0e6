package inject

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"nudge/internal/proc"
)

// Reasons FindProcess gives no pid.
var (
	// ErrNoProcess: no live process looks like the session's agent.
	ErrNoProcess = errors.New("no live process")
	// ErrAmbiguous: more than one live process could be the session's
	// agent; FindProcess never guesses between them.
	ErrAmbiguous = errors.New("more than one live process could be the session")
)

// Hint is what is known of a session, to find its live agent process when no
// registry names it.
type Hint struct {
	Agent, Session string
	// Project is the session's working folder; the process's cwd must be it.
	Project string
	// File is the session's transcript; a process holding it open is the
	// session's writer.
	File string
	// Executables are the agent's process names (classify.Agent.Executables).
	Executables []string
	// Others are processes known to hold other sessions (their live
	// registries say so); they are never this session's.
	Others []int
}

// candidate is a live process that may be a session's agent.
type candidate struct {
	pid, ppid int
	// names are the basenames the process goes by: its command name, argv[0]
	// and argv[1] (an agent started as `node …/bin/codex` or `python -m`
	// shows its own name only there).
	names []string
	args  []string
}

// FindProcess returns the pid of the live agent process of the session h
// describes: one of the person's processes named like one of h.Executables,
// working in h.Project, preferring one that names h.Session on its command
// line, then one holding h.File open. Two processes left that could both be
// the session is ErrAmbiguous; none is ErrNoProcess. A launcher whose child
// is the agent counts once (the outermost).
func FindProcess(ctx context.Context, h Hint) (int, error) {
	if len(h.Executables) == 0 {
		return 0, fmt.Errorf("%w for %s session %s: the agent's process names are not known", ErrNoProcess, h.Agent, h.Session)
	}
	all, err := candidates(ctx)
	if err != nil {
		return 0, err
	}
	var found []candidate
	for _, c := range all {
		if c.pid == os.Getpid() || slices.Contains(h.Others, c.pid) || !namedLike(c, h.Executables) {
			continue
		}
		if h.Project != "" {
			// An unknown cwd keeps the process in: it may be the session.
			if cwd, err := proc.Cwd(ctx, c.pid); err == nil && !sameDir(cwd, h.Project) {
				continue
			}
		}
		found = append(found, c)
	}
	found = outermost(found, all)
	if h.Session != "" {
		found = preferred(found, func(c candidate) bool {
			return slices.ContainsFunc(c.args, func(a string) bool { return strings.Contains(a, h.Session) })
		})
	}
	if h.File != "" && len(found) > 1 {
		found = preferred(found, func(c candidate) bool {
			held, err := proc.HoldsOpen(ctx, c.pid, h.File)
			return err == nil && held
		})
	}
	where := ""
	if h.Project != "" {
		where = " in " + h.Project
	}
	switch len(found) {
	case 0:
		return 0, fmt.Errorf("%w of %s%s (looked for %s)", ErrNoProcess, h.Agent, where, strings.Join(h.Executables, ", "))
	case 1:
		return found[0].pid, nil
	}
	pids := make([]string, len(found))
	for i, c := range found {
		pids[i] = fmt.Sprint(c.pid)
	}
	return 0, fmt.Errorf("%w: %s processes %s%s, none of which names session %s or holds its transcript open",
		ErrAmbiguous, h.Agent, strings.Join(pids, ", "), where, h.Session)
}

// namedLike reports whether c goes by one of names; a script's extension
// (".js", ".exe") does not count.
func namedLike(c candidate, names []string) bool {
	for _, n := range c.names {
		base := filepath.Base(n)
		stem := strings.TrimSuffix(base, filepath.Ext(base))
		if slices.Contains(names, base) || slices.Contains(names, stem) {
			return true
		}
	}
	return false
}

// outermost drops every candidate that descends from another candidate: a
// launcher and the agent it starts are one session.
func outermost(cs, all []candidate) []candidate {
	parent := make(map[int]int, len(all))
	for _, c := range all {
		parent[c.pid] = c.ppid
	}
	found := map[int]bool{}
	for _, c := range cs {
		found[c.pid] = true
	}
	return slices.DeleteFunc(cs, func(c candidate) bool {
		pid := c.ppid
		for range maxAncestry {
			if pid <= 1 {
				return false
			}
			if found[pid] {
				return true
			}
			pid = parent[pid]
		}
		return false
	})
}

// preferred returns the candidates for which ok holds, or all of them when
// none does.
func preferred(cs []candidate, ok func(candidate) bool) []candidate {
	var out []candidate
	for _, c := range cs {
		if ok(c) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return cs
	}
	return out
}

// sameDir reports whether a and b name the same folder.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// candidates lists the person's processes (package proc never lists
// another user's).
func candidates(ctx context.Context) ([]candidate, error) {
	ps, err := proc.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	out := make([]candidate, len(ps))
	for i, p := range ps {
		names := []string{p.Name}
		for j := 0; j < len(p.Args) && j < 2; j++ {
			names = append(names, filepath.Base(p.Args[j]))
		}
		out[i] = candidate{pid: p.PID, ppid: p.PPID, names: names, args: p.Args}
	}
	return out, nil
}
