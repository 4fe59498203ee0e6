package watch

import (
	"os"
	"path/filepath"
	"sort"
)

// FileSet is a family of files under an agent root. Pattern is '/'-separated,
// relative to the root; each segment may use path.Match wildcards
// ("projects/*/*.jsonl", "sessions/*/*/*/rollout-*.jsonl").
type FileSet struct {
	Pattern string
	// Snapshot: the whole file is one record, re-read on change (Claude's live
	// registry ~/.claude/sessions/<pid>.json).
	Snapshot bool
	// Database: OpenCode's SQLite database, read row by row, with the live
	// event streams of its running processes (opencode_db.go, opencode_live.go).
	Database bool
	// Host: the file only tells that its session changed; the session's
	// state is asked of the agent's own host, this program's `serve`
	// (muse serve), and the file is never read (host.go).
	Host string
	// Wake: a file whose changes only say that an agent process may have
	// started, so that its server is looked for (OpenCode's log,
	// opencode_live.go); it is never read.
	Wake bool
	// JSON: each line is one JSON record; a line that is not is skipped,
	// counted and logged.
	JSON bool
}

// Source is one agent's root folder and the files nudge reads under it.
type Source struct {
	Agent string
	Root  string
	Files []FileSet
	// FirstLook: the root was never scanned before. The files its first
	// scan finds are old history: each begins at its end, with that
	// position handed out as a checkpoint (docs/durability.md).
	FirstLook bool
}

// agentHome is where an agent keeps its files: a root folder named by an
// environment variable, else a folder in the home directory.
type agentHome struct {
	env   string // the variable that moves the root
	sub   string // the root's folder below that variable's folder ("" = the folder itself)
	dir   string // the default root, relative to $HOME
	files []FileSet
}

// agentHomes is the discovery table: adding an agent is one entry here.
var agentHomes = map[string]agentHome{
	// formats/claude.md §2: transcripts projects/<project-dir>/<session-id>.jsonl
	// (sub-agent transcripts sit one level deeper and are not matched); the live
	// registry sessions/<pid>.json, rewritten whole, removed when the CLI exits.
	"claude": {env: "CLAUDE_CONFIG_DIR", dir: ".claude", files: []FileSet{
		{Pattern: "projects/*/*.jsonl", JSON: true},
		{Pattern: "sessions/*.json", Snapshot: true},
	}},
	// formats/opencode.md §2.1: one SQLite database for every OpenCode
	// process, $XDG_DATA_HOME/opencode/opencode.db (XDG on macOS too); the
	// live state comes from the event streams of processes with a server.
	// Every process appends to log/opencode.log as it starts (§2.3; older
	// versions wrote log/<time>.log): a sign to look for its server.
	"opencode": {env: "XDG_DATA_HOME", sub: "opencode", dir: ".local/share/opencode", files: []FileSet{
		{Pattern: "opencode.db", Database: true},
		{Pattern: "log/*.log", Wake: true},
	}},
	// formats/codex.md §2: one rollout per session under the start date's folders.
	"codex": {env: "CODEX_HOME", dir: ".codex", files: []FileSet{
		{Pattern: "sessions/*/*/*/rollout-*.jsonl", JSON: true},
	}},
	// formats/kimi.md A1: the person's agent is agents/main; other agents are sub-agents.
	"kimi_code": {env: "KIMI_CODE_HOME", dir: ".kimi-code", files: []FileSet{
		{Pattern: "sessions/*/*/agents/main/wire.jsonl", JSON: true},
	}},
	// formats/kimi.md B1, B3: the legacy CLI's wire says a turn failed, its log says why.
	"kimi": {env: "KIMI_SHARE_DIR", dir: ".kimi", files: []FileSet{
		{Pattern: "sessions/*/*/wire.jsonl", JSON: true},
		{Pattern: "logs/kimi.log"},
	}},
	// formats/muse.md A1: Muse's home is ~/.muse (no variable moves it). MSP
	// frame logs that a client on `muse serve`'s stdio writes under
	// nudge/frames/ are read line by line; a session's session.jsonl is not
	// a format: its change only triggers a host query to nudge's own
	// `muse serve` (session/read, usage/read).
	"muse": {dir: ".muse", files: []FileSet{
		{Pattern: "nudge/frames/*.ndjson", JSON: true},
		{Pattern: "sessions/*/*/*/*/session.jsonl", Host: "muse"},
	}},
	// formats/grok.md §2, §3: Grok writes no failure anywhere; `nudge hook grok`
	// appends grok-dev's hook input beside its grok.db, one file per session.
	"grok": {dir: ".grok", files: []FileSet{
		{Pattern: "nudge/hooks/*.jsonl", JSON: true},
	}},
}

// DefaultRoot is the agent's own root folder: its environment variable when
// set, else its folder in the home directory; "" for an unknown agent or when
// there is no home directory.
func DefaultRoot(agent string) string {
	h, ok := agentHomes[agent]
	if !ok {
		return ""
	}
	if dir := os.Getenv(h.env); dir != "" {
		return filepath.Join(dir, h.sub)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, h.dir)
}

// Sources returns the discovery entries of the agents named in roots, each
// with its configured root ("" = DefaultRoot), sorted by agent. Agents without
// an entry, or without a root, are left out.
func Sources(roots map[string]string) []Source {
	var out []Source
	for agent, root := range roots {
		h, ok := agentHomes[agent]
		if !ok {
			continue
		}
		if root == "" {
			root = DefaultRoot(agent)
		}
		if root == "" {
			continue
		}
		out = append(out, Source{Agent: agent, Root: filepath.Clean(root), Files: append([]FileSet(nil), h.files...)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Agent < out[j].Agent })
	return out
}
