package inject

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Auto in inject.order stands for every available backend not named
// explicitly, in the automatic order.
const Auto = "auto"

// Options are the settings backends are built from.
type Options struct {
	// Resume names the agents whose sessions may be continued headless
	// when no live process holds them (inject.resume).
	Resume map[string]bool
	// Executables returns an agent's process names
	// (classify.Agent.Executables); nil means none are known.
	Executables func(agent string) []string
	// Log is where backends that outlive a delivery (headless resume) say
	// how it ended; nil discards it.
	Log *slog.Logger
}

// registration is one backend as it registered itself.
type registration struct {
	name string
	// rank orders the automatic choice: the most exact place first (nudge's
	// own pty, the agent's own server), a terminal multiplexer next, then
	// terminal emulators, headless last.
	rank int
	// available reports whether the backend can work on this machine.
	available func(Options) bool
	build     func(Options) Backend
}

var (
	registryMu sync.Mutex
	registry   = map[string]registration{}
)

// Ranks of the automatic order (inject.order: [auto]).
const (
	rankWrap     = 10 // nudge wrap: nudge owns the pty
	rankServer   = 20 // an agent's own server (OpenCode HTTP)
	rankTmux     = 30
	rankScreen   = 32
	rankZellij   = 34
	rankWezTerm  = 40
	rankKitty    = 50
	rankITerm    = 60
	rankTerminal = 70
	rankResume   = 100
)

// register adds a backend; each backend's file calls it from init.
func register(r registration) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[r.name]; dup {
		panic(fmt.Sprintf("inject: backend %q registered twice", r.name))
	}
	registry[r.name] = r
}

// registered returns every backend in the automatic order.
func registered() []registration {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]registration, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].rank != out[j].rank {
			return out[i].rank < out[j].rank
		}
		return out[i].name < out[j].name
	})
	return out
}

// Names lists every backend, in the automatic order.
func Names() []string {
	var names []string
	for _, r := range registered() {
		names = append(names, r.name)
	}
	return names
}

// Build returns an Injector over the backends order names, in that order;
// "auto" stands for every available backend not named elsewhere in order,
// in the automatic order. An explicitly named backend is used even when it
// looks unavailable (its refusals then say why). An unknown or repeated
// name is an error.
func Build(order []string, opts Options) (*Injector, error) {
	if len(order) == 0 {
		order = []string{Auto}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if err := CheckOrder(order); err != nil {
		return nil, err
	}
	all := registered()
	named := map[string]bool{}
	for _, name := range order {
		named[name] = name != Auto
	}
	var backends []Backend
	for _, name := range order {
		if name == Auto {
			for _, r := range all {
				if !named[r.name] && r.available(opts) {
					backends = append(backends, r.build(opts))
				}
			}
			continue
		}
		i := slices.IndexFunc(all, func(r registration) bool { return r.name == name })
		backends = append(backends, all[i].build(opts))
	}
	return New(backends...), nil
}

// CheckOrder reports the first name of order (inject.order) that is no
// backend, or named twice.
func CheckOrder(order []string) error {
	all := registered()
	named := map[string]bool{}
	for _, name := range order {
		switch {
		case named[name] && name == Auto:
			return errors.New("inject.order: auto named twice")
		case named[name]:
			return fmt.Errorf("inject.order: %q named twice", name)
		case name != Auto && !slices.ContainsFunc(all, func(r registration) bool { return r.name == name }):
			return fmt.Errorf("inject.order: unknown backend %q (known: %s, %s)", name, strings.Join(Names(), ", "), Auto)
		}
		named[name] = true
	}
	return nil
}

// installed reports whether program is in PATH.
func installed(program string) bool {
	_, err := exec.LookPath(program)
	return err == nil
}
