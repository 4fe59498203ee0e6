package classify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The corpus from the world (testdata/corpus/README.md): failure records of
// versions and tools other than the ones nudge was built against, each with
// its public source and the class its meaning gives.

// corpusEntry is one line of testdata/corpus/<agent>.jsonl.
type corpusEntry struct {
	Agent   string `json:"agent"`
	Source  string `json:"source"`
	Version string `json:"version"`
	Form    string `json:"form"`  // "record", "error" or "text"
	Input   string `json:"input"` // as the source gives it
	TS      string `json:"ts"`    // the record's time, when the record has none
	Class   Class  `json:"class"`
	ResetAt string `json:"reset_at"` // RFC 3339; "local:<time>" on the machine's clock; "unreadable"
	Why     string `json:"why"`

	line int // 1-based, in its file
}

func (c corpusEntry) String() string {
	return fmt.Sprintf("%s:%d (%s)", c.Agent, c.line, c.Source)
}

// loadCorpus reads every corpus file.
func loadCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	var out []corpusEntry
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			n++
			var c corpusEntry
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s:%d: %v", p, n, err)
			}
			c.line = n
			if want := strings.TrimSuffix(filepath.Base(p), ".jsonl"); c.Agent != want {
				t.Fatalf("%s:%d: agent %q in the file of %q", p, n, c.Agent, want)
			}
			out = append(out, c)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// corpusTime is the entry's own time: the record's timestamp where it has
// one, else ts.
func corpusTime(c corpusEntry, recordTS string) time.Time {
	for _, s := range []string{recordTS, c.TS} {
		if at, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return at
		}
	}
	return time.Time{}
}

// corpusFailure reads an entry through its agent's failure reading. A
// "text" entry is the error text alone, put where the agent's records keep
// it in their barest shape; an "error" entry is the agent's error object;
// a "record" entry is a whole record.
func corpusFailure(c corpusEntry) (Failure, error) {
	in := []byte(c.Input)
	switch c.Agent {
	case "claude":
		var r claudeRecord
		if c.Form == "text" {
			b, _ := json.Marshal(map[string]any{"type": "assistant", "isApiErrorMessage": true,
				"message": map[string]any{"role": "assistant", "model": "<synthetic>",
					"content": []map[string]string{{"type": "text", "text": c.Input}}}})
			in = b
		}
		if !decodeRecord(in, &r) {
			return Failure{}, fmt.Errorf("not a Claude record")
		}
		return claudeFailure(&r, corpusTime(c, r.Timestamp)), nil
	case "codex":
		if c.Form == "text" {
			return codexFailure(&codexError{Message: c.Input}, time.Time{}, corpusTime(c, "")), nil
		}
		var r codexRecord
		if !decodeRecord(in, &r) || r.Payload.Error == nil {
			return Failure{}, fmt.Errorf("not a Codex record with an error")
		}
		return codexFailure(r.Payload.Error, time.Time{}, corpusTime(c, r.Timestamp)), nil
	case "opencode":
		var e openCodeError
		if c.Form == "text" {
			e.Name, e.Data.Message = "UnknownError", c.Input
		} else if !decodeRecord(in, &e) {
			return Failure{}, fmt.Errorf("not an OpenCode error")
		}
		return openCodeFailure(&e, corpusTime(c, "")), nil
	case "kimi_code":
		var e kimiCodeError
		switch c.Form {
		case "text":
			e.Message = c.Input
		case "record":
			var r struct {
				Error *kimiCodeError `json:"error"`
			}
			if !decodeRecord(in, &r) || r.Error == nil {
				return Failure{}, fmt.Errorf("not a Kimi Code record with an error")
			}
			e = *r.Error
		default:
			if !decodeRecord(in, &e) {
				return Failure{}, fmt.Errorf("not a Kimi Code error")
			}
		}
		return kimiCodeFailure(&e, corpusTime(c, "")), nil
	case "kimi":
		l := kimiLogLine{kind: kimiLogFailed, text: c.Input}
		if m := kimiErrorCode.FindStringSubmatch(c.Input); m != nil {
			fmt.Sscan(m[1], &l.status)
		}
		return kimiLegacyFailure(&l), nil
	case "muse":
		var p museParams
		if !decodeRecord(in, &p) {
			return Failure{}, fmt.Errorf("not MSP turn/completed params")
		}
		return museFailure(&p, nil, corpusTime(c, "")), nil
	case "grok":
		return grokFailure(c.Input, corpusTime(c, "")), nil
	}
	return Failure{}, fmt.Errorf("no agent %q", c.Agent)
}

// corpusReset checks f's reset time against the entry's.
func corpusReset(c corpusEntry, f Failure) error {
	switch {
	case c.ResetAt == "":
		if !f.ResetAt.IsZero() {
			return fmt.Errorf("reset %s, want none", f.ResetAt.UTC().Format(time.RFC3339))
		}
	case c.ResetAt == "unreadable":
		if !f.ResetAt.IsZero() || f.ResetUnread == "" {
			return fmt.Errorf("reset %v (unread %q), want an unreadable one", f.ResetAt, f.ResetUnread)
		}
	default:
		want, err := corpusWantReset(c.ResetAt)
		if err != nil {
			return err
		}
		if !f.ResetAt.Equal(want) {
			return fmt.Errorf("reset %s, want %s", f.ResetAt.UTC().Format(time.RFC3339), want.Format(time.RFC3339))
		}
	}
	return nil
}

// corpusWantReset reads an expected reset: RFC 3339, or "local:" and a
// zoneless time on the corpus's machine clock (UTC, TestCorpus).
func corpusWantReset(s string) (time.Time, error) {
	if rest, ok := strings.CutPrefix(s, "local:"); ok {
		return time.ParseInLocation("2006-01-02T15:04:05", rest, time.UTC)
	}
	return time.Parse(time.RFC3339, s)
}

// TestCorpus holds every corpus record to the class and reset time its
// meaning gives.
func TestCorpus(t *testing.T) {
	defer func(z *time.Location) { wallClockZone = z }(wallClockZone)
	wallClockZone = time.UTC
	entries := loadCorpus(t)
	right := 0
	perAgent := map[string][2]int{}
	for _, c := range entries {
		f, err := corpusFailure(c)
		if err == nil && f.Class != c.Class {
			err = fmt.Errorf("class %s (%s), want %s: %s", f.Class, f.Why(), c.Class, c.Why)
		}
		if err == nil {
			err = corpusReset(c, f)
		}
		n := perAgent[c.Agent]
		n[1]++
		if err != nil {
			t.Errorf("%s: %v\n  input: %.300s", c, err, c.Input)
		} else {
			right++
			n[0]++
		}
		perAgent[c.Agent] = n
	}
	t.Logf("corpus: %d of %d right %v", right, len(entries), perAgent)
}

// BenchmarkFailureCorpus reads every corpus entry once per iteration: the
// cost of the failure readings on the records of the world.
func BenchmarkFailureCorpus(b *testing.B) {
	entries := loadCorpus(b)
	b.ResetTimer()
	for range b.N {
		for _, c := range entries {
			if _, err := corpusFailure(c); err != nil {
				b.Fatal(err)
			}
		}
	}
}
