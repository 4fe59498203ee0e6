package classify

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Reader turns the records of one file (a transcript, a registry entry) into
// events. It may keep memory across lines of that file; feeding the same
// lines to a fresh Reader gives the same events.
type Reader interface {
	// Read classifies one complete record. A malformed record yields no
	// events and no panic.
	Read(record []byte) []Event
}

// Agent is one agent's knowledge of its records. Each agent registers itself
// from its own file in this package.
type Agent struct {
	// Name is the config key and the name shown to the person ("claude").
	Name string
	// Title is the agent's name as people write it ("Claude Code").
	Title string
	// Home is the agent's root folder; Files are the families of files
	// nudge reads under it (internal/watch finds and tails them).
	Home  Home
	Files []FileSet
	// NewReader starts reading the file at path; files are the files
	// beside it that the reader may consult.
	NewReader func(path string, files Files) Reader
	// Recognize tells whether a file belongs to this agent, from its path
	// and its first bytes (used by `nudge classify` without --agent).
	Recognize func(path string, head []byte) bool
	// ReadBy, if set, says for `nudge doctor` how nudge reads the session
	// whose records come from path, where that is not plain to see.
	ReadBy func(path string) string
	// LoginHint is what a person does after an auth failure.
	LoginHint string
	// Blind says what nudge cannot see for this agent ("" when nothing
	// notable); `nudge doctor` and the status views show it.
	Blind string
	// Executables are the agent's process names, to find the live process
	// of a session when no registry names it.
	Executables []string
	// ScreenReady, if set, checks a captured terminal screen right before
	// typing: it returns an error unless the agent sits idle at its input
	// prompt with no approval or question on screen. Agents whose records
	// cannot show an open box (Codex) need it.
	ScreenReady func(screen string) error
	// ReadComposer, if set, reads what the agent's input prompt holds on a
	// captured screen, with the terminal's caret where it is known
	// (Composer). nudge types only into a prompt it saw empty; for an agent
	// without it, only the signs that a person is at the keyboard hold a
	// continuation (docs/behaviour.md §3).
	ReadComposer func(screen string, caret Caret) Composer
	// PasteSettle, if set, is how long after a paste the agent takes Enter
	// as a new line rather than as sending; nudge presses Enter that much
	// later once its text shows (Gemini CLI).
	PasteSettle time.Duration
	// Hook, if set, is how the agent's own hooks feed nudge (`nudge hook
	// <name>`), for an agent whose records do not show a failed turn.
	Hook *Hook
	// Resume, if set, is the agent's headless command that continues a
	// session no live process holds (internal/inject, inject.resume).
	Resume *ResumeCommand
	// SessionID is the shape of the agent's own session ids, anchored. A
	// session id read from records is untrusted: one of another shape is
	// never put on a command line, in a path or in a URL (CheckSession).
	SessionID *regexp.Regexp
	// Provider is the provider id a dead turn of this agent failed
	// against when its records name none ("anthropic"; "" when the
	// agent has no one provider).
	Provider string
}

// Home is where an agent keeps its files: a root folder named by an
// environment variable, else a folder in the home directory.
type Home struct {
	Env string // the variable that moves the root ("CLAUDE_CONFIG_DIR"); "" when none does
	Sub string // the root below the variable's folder ("" = the folder itself)
	Dir string // the default root, relative to the home directory (".claude")
}

// FileSet is a family of files under an agent's root. Pattern is
// '/'-separated, relative to the root; each segment may use path.Match
// wildcards ("projects/*/*.jsonl", "sessions/*/*/*/rollout-*.jsonl").
// Kind says how the files are read; each kind is one source in
// internal/watch (docs/agents/adding.md §3).
type FileSet struct {
	Pattern string
	Kind    FileKind
	// Host is the program whose `serve` a HostQuery asks ("muse").
	Host string
}

// FileKind is one way of reading a family of files.
type FileKind uint8

const (
	// Lines: plain lines appended (a log).
	Lines FileKind = iota
	// JSONLines: lines appended, each one JSON record; a line that is not
	// is skipped, counted and logged.
	JSONLines
	// Snapshot: the whole file is one record, rewritten whole and re-read
	// on change (Claude's live registry ~/.claude/sessions/<pid>.json); its
	// Reader is a WholeFile.
	Snapshot
	// Database: OpenCode's SQLite database, read row by row, with the live
	// event streams of its running processes.
	Database
	// HostQuery: the file only tells that its session changed; the
	// session's state is asked of the agent's own host, FileSet.Host's
	// `serve` (muse serve), and the file is never read.
	HostQuery
	// Wake: a file whose changes only say that an agent process may have
	// started, so that its server is looked for (OpenCode's log); it is
	// never read.
	Wake
)

// kindNames are the kinds as docs/agents/adding.md §3 names them.
var kindNames = [...]string{Lines: "lines", JSONLines: "JSON lines", Snapshot: "snapshot", Database: "database", HostQuery: "host query", Wake: "wake"}

// String names k as docs/agents/adding.md §3 does.
func (k FileKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("FileKind(%d)", uint8(k))
}

// FileKinds lists every kind of file, in order.
func FileKinds() []FileKind {
	out := make([]FileKind, len(kindNames))
	for i := range out {
		out[i] = FileKind(i)
	}
	return out
}

// Hook is how an agent's own hooks feed nudge: its hook command, `nudge hook
// <name>`, appends one line per call to a file under the agent's root, read
// like any other record file (the agent's Files name it).
type Hook struct {
	// EventVar is the environment variable that names the hook's event.
	EventVar string
	// CountDB and CountQuery, if set, are a number a record may carry from
	// the agent's own SQLite database: CountQuery, with the session id as
	// its one argument, asked of CountDB, relative to the root.
	CountDB, CountQuery string
	// Record turns one call's input (its stdin, at most HookInputMax
	// bytes) into the line to append and names its file ('/'-separated,
	// relative to the root). count asks CountQuery for a session; its
	// error leaves the number out.
	Record func(input []byte, event string, now time.Time, count func(session string) (int, error)) (file string, line []byte, err error)
}

// HookInputMax caps the input one hook call may hand over.
const HookInputMax = 4 << 20

// ResumeCommand is an agent's headless command that continues a session by
// id with one prompt: argv only, never a shell.
type ResumeCommand struct {
	// Argv is the command line. The session id has the agent's shape
	// (CheckSession); the text follows "--" where the CLI's parser takes
	// it so.
	Argv func(session, text string) []string
	// TextOption: the text is an option's value and the parser is not
	// known to take one starting with "-": such a text is refused.
	TextOption bool
}

// uuidPattern is a UUID in its text form, the session id of most agents.
const uuidPattern = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`

// anyIDPattern is the session id of an agent whose ids have no documented
// shape: letters, digits and ._- , never a leading "-" or a path.
const anyIDPattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`

// CheckSession returns an error unless id has the shape of a's session
// ids; an id starting with "-" (which a command line would read as an
// option) never does.
func (a Agent) CheckSession(id string) error {
	switch {
	case strings.HasPrefix(id, "-"):
		return fmt.Errorf("%s session id %q starts with \"-\"; refused", a.Title, id)
	case a.SessionID == nil || !a.SessionID.MatchString(id):
		return fmt.Errorf("%q is not a %s session id; refused", id, a.Title)
	}
	return nil
}

var (
	agentsMu sync.RWMutex
	agents   = map[string]Agent{}
)

// register adds an agent; it is called from each agent file's init.
func register(a Agent) {
	agentsMu.Lock()
	defer agentsMu.Unlock()
	if _, dup := agents[a.Name]; dup {
		panic(fmt.Sprintf("classify: agent %q registered twice", a.Name))
	}
	agents[a.Name] = a
}

// Lookup returns the agent called name.
func Lookup(name string) (Agent, bool) {
	agentsMu.RLock()
	defer agentsMu.RUnlock()
	a, ok := agents[name]
	return a, ok
}

// Agents lists every known agent, by name.
func Agents() []Agent {
	agentsMu.RLock()
	defer agentsMu.RUnlock()
	out := make([]Agent, 0, len(agents))
	for _, a := range agents {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names are the registered agents' names, sorted.
func Names() []string {
	var names []string
	for _, a := range Agents() {
		names = append(names, a.Name)
	}
	return names
}

// turnIDPrefix starts the ID of an event named by its turn (TurnScoped).
const turnIDPrefix = "turn "

// turnEvents gives events that happen once per turn the ID of their turn,
// when the agent names it.
func turnEvents(turn string, events []Event) []Event {
	if turn == "" {
		return events
	}
	for i := range events {
		events[i].ID = turnIDPrefix + turn
	}
	return events
}

// recordEvents gives each event its record's id with its kind, for an
// agent whose records carry their own id: a record read again (appended
// again whole, or re-read after a restart) gives the same events
// (docs/durability.md).
func recordEvents(id string, events ...Event) []Event {
	for i := range events {
		events[i].ID = id + " " + string(events[i].Kind)
	}
	return events
}

// Recognize finds the agent that wrote the file at path, or false.
func Recognize(path string, head []byte) (Agent, bool) {
	for _, a := range Agents() {
		if a.Recognize != nil && a.Recognize(path, head) {
			return a, true
		}
	}
	return Agent{}, false
}
