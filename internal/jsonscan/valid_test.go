package jsonscan

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nudge/internal/samples"
)

// sampleLines are every line of the captured session files of every agent.
func sampleLines(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	err := filepath.WalkDir(samples.Dir(), func(p string, e fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		out = append(out, bytes.Split(b, []byte("\n"))...)
		return err
	})
	if err != nil || len(out) < 100 {
		t.Fatalf("only %d sample lines: %v", len(out), err)
	}
	return out
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	cases := []string{
		``, ` `, `{}`, `[]`, `{"a":1}`, `{"a":}`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":[1,{"b":null}]}`,
		`"x"`, `"\u00e9\n"`, `"\u00g9"`, `"\x"`, "\"a\tb\"", `-0.5e+10`, `01`, `-`, `1.`, `1e`, `.5`, `tru`, `true `,
		`{"a":1}}`, `[[]]]`, `{"a":1} {"b":2}`, "\xff", `"\xff"`, `{"type":"assi`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), `nul`, `nulls`, `{"a":true,"b":false,"c":null}`,
	}
	for _, c := range cases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.40q) = %v, json.Valid %v", c, got, want)
		}
	}
	for _, l := range sampleLines(t) {
		for _, b := range [][]byte{l, l[:len(l)/2]} {
			if got, want := Valid(b), json.Valid(b); got != want {
				t.Errorf("Valid(%.60q…) = %v, json.Valid %v", b, got, want)
			}
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range []string{`{"a":[1,{"b":null}],"c":"\u00e9"}`, `[1,2`, `{"x":-1.5e3}`, `"a\\"`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

// BenchmarkValid compares Valid with json.Valid on the captured
// transcripts' lines.
func BenchmarkValid(b *testing.B) {
	lines := sampleLines(b)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	for name, valid := range map[string]func([]byte) bool{"nudge": Valid, "encoding-json": json.Valid} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, l := range lines {
					valid(l)
				}
			}
		})
	}
}
