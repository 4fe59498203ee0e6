package classify

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"nudge/internal/samples"
	"nudge/internal/watch/disk"
)

// TestReadersKeepNoLine: a reader keeps copies of what it needs of a
// record, never the record's bytes. The watcher hands each line in memory
// that serves later lines once its batch is handled (docs/performance.md
// §3), so every sample read from lines overwritten after each Read gives
// exactly the events read from lines of their own.
func TestReadersKeepNoLine(t *testing.T) {
	sources := map[string][]string{
		claudeName:     {samples.Dir("claude", "*.jsonl")},
		codexName:      {samples.Dir("codex", "*.jsonl")},
		kimiCodeName:   {samples.Dir("kimi", "*", "kimi_home", "sessions", "*", "*", "agents", "main", "wire.jsonl")},
		kimiLegacyName: {samples.Dir("kimi-legacy", "*", "wire.jsonl")},
		museName:       {samples.Dir("muse", "*.ndjson")},
		grokName:       {filepath.Join("testdata", "grok", "*.jsonl")},
	}
	for agent, globs := range sources {
		a, ok := Lookup(agent)
		if !ok {
			t.Fatalf("no agent %s", agent)
		}
		var files []string
		for _, g := range globs {
			m, err := filepath.Glob(g)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, m...)
		}
		if len(files) == 0 {
			t.Fatalf("%s: no samples at %v", agent, globs)
		}
		events := 0
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			own, reused := a.NewReader(path, disk.Files{}), a.NewReader(path, disk.Files{})
			var want, got []Event
			var buf []byte
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, MaxRecordBytes)
			for sc.Scan() {
				want = append(want, own.Read(bytes.Clone(sc.Bytes()))...)
				buf = append(buf[:0], sc.Bytes()...)
				got = append(got, reused.Read(buf)...)
				for i := range buf {
					buf[i] = 'x'
				}
			}
			events += len(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s read from overwritten lines gives other events:\n got %+v\nwant %+v", agent, filepath.Base(path), got, want)
			}
		}
		if events == 0 {
			t.Errorf("%s: no events from %d samples", agent, len(files))
		}
	}
}
