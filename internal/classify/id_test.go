package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"nudge/internal/samples"
	"nudge/internal/watch/disk"
)

// readLines classifies a sample file line by line with a fresh reader of
// agent, keeping each line with the events it gave.
func readLines(t *testing.T, agent, path string) (lines [][]byte, events [][]Event) {
	t.Helper()
	a, ok := Lookup(agent)
	if !ok {
		t.Fatalf("no agent %s", agent)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := a.NewReader(path, disk.Files{})
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxRecordBytes)
	for sc.Scan() {
		line := bytes.Clone(sc.Bytes())
		lines = append(lines, line)
		events = append(events, r.Read(line))
	}
	return lines, events
}

// TestEventIDs: events carry the agent's own identity of what they report,
// where its records have one; the same records always give the same IDs;
// and no two dead turns of one file share one.
func TestEventIDs(t *testing.T) {
	glob := func(parts ...string) []string {
		m, err := filepath.Glob(samples.Dir(parts...))
		if err != nil || len(m) == 0 {
			t.Fatalf("no samples at %v: %v", parts, err)
		}
		return m
	}
	type source struct {
		agent string
		files []string
		// id says what ID an event from line must carry ("" = any).
		id func(line []byte, e Event) string
	}
	field := func(line []byte, path ...string) string {
		var v any
		if json.Unmarshal(line, &v) != nil {
			return ""
		}
		for _, k := range path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		switch v := v.(type) {
		case string:
			return v
		case float64:
			b, _ := json.Marshal(v)
			return string(b)
		}
		return ""
	}
	sources := []source{
		{"claude", glob("claude", "*.jsonl"), func(line []byte, e Event) string {
			if e.Process != nil {
				return ""
			}
			return field(line, "uuid")
		}},
		{"codex", glob("codex", "*.jsonl"), func(line []byte, e Event) string {
			switch e.Kind {
			case TurnStarted, TurnDone, TurnFailed:
				if turn := field(line, "payload", "turn_id"); turn != "" {
					return "turn " + turn
				}
			}
			return ""
		}},
		{"kimi_code", glob("kimi", "*", "kimi_home", "sessions", "*", "*", "agents", "main", "wire.jsonl"), func(line []byte, e Event) string {
			if field(line, "type") == "turn.ended" {
				return "turn " + field(line, "turnId") + " at " + field(line, "time")
			}
			return ""
		}},
		{"muse", glob("muse", "*.ndjson"), nil},
	}
	for _, src := range sources {
		withID := 0
		for _, path := range src.files {
			lines, events := readLines(t, src.agent, path)
			_, again := readLines(t, src.agent, path)
			failed := map[string]bool{}
			for i, evs := range events {
				for j, e := range evs {
					if e.ID != again[i][j].ID {
						t.Errorf("%s line %d: ID %q, then %q from a fresh reader", filepath.Base(path), i+1, e.ID, again[i][j].ID)
					}
					if e.ID != "" {
						withID++
					}
					if src.id != nil {
						if want := src.id(lines[i], e); want != "" && e.ID != want {
							t.Errorf("%s line %d: %s has ID %q, want %q", filepath.Base(path), i+1, e.Kind, e.ID, src.id(lines[i], e))
						}
					}
					if e.Kind == TurnFailed && e.ID != "" {
						if failed[e.ID] {
							t.Errorf("%s: two dead turns share the ID %q", filepath.Base(path), e.ID)
						}
						failed[e.ID] = true
					}
				}
			}
		}
		if withID == 0 {
			t.Errorf("%s: no event carries an ID", src.agent)
		}
	}
}
