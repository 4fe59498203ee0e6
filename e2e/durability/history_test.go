package durability

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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

func loadSamples(t *testing.T, agent, dir, session string) []sample {
	t.Helper()
	files, err := filepath.Glob(samples.Dir(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s samples: %v", agent, err)
	}
	a, _ := classify.Lookup(agent)
	sessionID := regexp.MustCompile(session)
	var out []sample
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := sessionID.FindStringSubmatch(string(b))
		if m == nil {
			continue
		}
		events, err := watch.ReadFile(t.Context(), f, a, slog.New(slog.NewTextHandler(t.Output(), nil)))
		if err != nil {
			t.Fatal(err)
		}
		s := sample{agent: agent, text: string(b), session: m[1]}
		for _, ev := range events {
			if ev.Kind == classify.TurnFailed {
				s.deadTurns++
			}
		}
		seen := map[string]bool{}
		for _, id := range uuidPattern.FindAllString(s.text, -1) {
			if !seen[id] {
				seen[id] = true
				s.ids = append(s.ids, id)
			}
		}
		out = append(out, s)
	}
	return out
}

// history writes n session files under home, made from the repo's samples:
// three Claude Code transcripts for each Codex rollout, every file with its
// own session id and record ids. It returns how many dead turns they hold.
func history(t *testing.T, home string, n int) (deadTurns int) {
	t.Helper()
	claude := loadSamples(t, "claude", "claude", `"sessionId":"([0-9a-f-]{36})"`)
	codex := loadSamples(t, "codex", "codex", `"type":"session_meta","payload":\{"id":"([0-9a-f-]{36})"`)
	for i := range n {
		var s sample
		if i%4 == 3 {
			s = codex[i%len(codex)]
		} else {
			s = claude[i%len(claude)]
		}
		pairs := make([]string, 0, 2*len(s.ids))
		for j, id := range s.ids {
			h := fmt.Sprintf("%x", sha256.Sum256(fmt.Appendf(nil, "%d/%d", i, j)))
			pairs = append(pairs, id, h[0:8]+"-"+h[8:12]+"-4"+h[13:16]+"-8"+h[17:20]+"-"+h[20:32])
		}
		text := strings.NewReplacer(pairs...).Replace(s.text)
		session := strings.NewReplacer(pairs...).Replace(s.session)
		var path string
		if s.agent == "claude" {
			path = filepath.Join(home, ".claude", "projects", fmt.Sprintf("-home-dev-project%02d", i%40), session+".jsonl")
		} else {
			path = filepath.Join(home, ".codex", "sessions", "2026", "11", fmt.Sprintf("%02d", 1+i%28), "rollout-2026-11-01T08-00-00-"+session+".jsonl")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		deadTurns += s.deadTurns
	}
	return deadTurns
}
