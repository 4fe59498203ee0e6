// Package history writes a person's months of agent sessions, made from
// the records captured from the real CLIs (package samples): for tests of
// what nudge does with old history, and for the benchmarks.
package history

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"nudge/internal/classify"
	"nudge/internal/samples"
	"nudge/internal/watch"
)

// uuidPattern finds the ids in the agents' records: session ids, record
// uuids, turn ids.
var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// sample is one captured session file, with what it holds.
type sample struct {
	agent     string
	text      string
	session   string   // its session id
	ids       []string // every id in it
	deadTurns int
}

func loadSamples(agent, session string) ([]sample, error) {
	files, err := filepath.Glob(samples.Dir(agent, "*.jsonl"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no %s samples in %s: %v", agent, samples.Dir(agent), err)
	}
	a, _ := classify.Lookup(agent)
	sessionID := regexp.MustCompile(session)
	var out []sample
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		m := sessionID.FindStringSubmatch(string(b))
		if m == nil {
			continue
		}
		events, err := watch.ReadFile(context.Background(), f, a, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, fmt.Errorf("sample %s: %w", f, err)
		}
		s := sample{agent: agent, text: string(b), session: m[1], ids: IDs(string(b))}
		for _, ev := range events {
			if ev.Kind == classify.TurnFailed {
				s.deadTurns++
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// Write writes n session files under home (its .claude and .codex
// folders): three Claude Code transcripts for each Codex rollout, every
// file with its own session id and record ids. It returns how many dead
// turns they hold.
func Write(home string, n int) (deadTurns int, err error) {
	claude, err := loadSamples("claude", `"sessionId":"([0-9a-f-]{36})"`)
	if err != nil {
		return 0, err
	}
	codex, err := loadSamples("codex", `"type":"session_meta","payload":\{"id":"([0-9a-f-]{36})"`)
	if err != nil {
		return 0, err
	}
	for i := range n {
		var s sample
		if i%4 == 3 {
			s = codex[i%len(codex)]
		} else {
			s = claude[i%len(claude)]
		}
		ids := NewIDs(s.ids, fmt.Sprint(i))
		text := ids.Replace(s.text)
		session := ids.Replace(s.session)
		var path string
		if s.agent == "claude" {
			path = filepath.Join(home, ".claude", "projects", fmt.Sprintf("-home-dev-project%02d", i%40), session+".jsonl")
		} else {
			path = filepath.Join(home, ".codex", "sessions", "2026", "11", fmt.Sprintf("%02d", 1+i%28), "rollout-2026-11-01T08-00-00-"+session+".jsonl")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return 0, err
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return 0, err
		}
		deadTurns += s.deadTurns
	}
	return deadTurns, nil
}

// NewIDs replaces each of ids by an id of the same shape derived from seed
// and its place: the same seed gives the same ids.
func NewIDs(ids []string, seed string) *strings.Replacer {
	pairs := make([]string, 0, 2*len(ids))
	for j, id := range ids {
		h := fmt.Sprintf("%x", sha256.Sum256(fmt.Appendf(nil, "%s/%d", seed, j)))
		pairs = append(pairs, id, h[0:8]+"-"+h[8:12]+"-4"+h[13:16]+"-8"+h[17:20]+"-"+h[20:32])
	}
	return strings.NewReplacer(pairs...)
}

// IDs returns every id in text, each once, in order.
func IDs(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range uuidPattern.FindAllString(text, -1) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
