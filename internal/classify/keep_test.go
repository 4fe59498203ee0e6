package classify

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
	// each agent's files among the samples: every file of its records, at
	// any depth, and the logs it reads as lines.
	walk := func(dir string, take func(path string) bool) []string {
		var files []string
		err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && take(path) {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	ext := func(exts ...string) func(string) bool {
		return func(path string) bool { return slices.Contains(exts, filepath.Ext(path)) }
	}
	sources := map[string][]string{
		claudeName:     walk(samples.Dir("claude"), ext(".jsonl")),
		codexName:      walk(samples.Dir("codex"), ext(".jsonl")),
		kimiCodeName:   walk(samples.Dir("kimi"), func(p string) bool { return filepath.Base(p) == "wire.jsonl" }),
		kimiLegacyName: walk(samples.Dir("kimi-legacy"), func(p string) bool { return filepath.Base(p) == "wire.jsonl" || isKimiLogPath(p) }),
		museName:       walk(samples.Dir("muse"), ext(".ndjson")),
		grokName:       walk(filepath.Join("testdata", "grok"), ext(".jsonl")),
		geminiName:     walk(samples.Dir("gemini"), ext(".jsonl")),
	}
	for agent, files := range sources {
		a, ok := Lookup(agent)
		if !ok {
			t.Fatalf("no agent %s", agent)
		}
		if len(files) == 0 {
			t.Fatalf("%s: no samples", agent)
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
