package safetext

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzEncodeJSON: whatever a string holds, its JSON holds no character
// Line would take out, and decodes to the same string.
func FuzzEncodeJSON(f *testing.F) {
	for _, s := range []string{"plain", "\x7f\u0080\u009b2J\u009d0;x\u009c", "\u202egnp.exe\u2066\u2069\u061c\u200e", "\x1b[2J\n", "\xff<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		if err := EncodeJSON(&buf, map[string]string{"text": s}, "  "); err != nil {
			t.Fatal(err)
		}
		out := buf.Bytes()
		for i := 0; i < len(out); {
			r, size := utf8.DecodeRune(out[i:])
			if r != '\n' && unsafe(r) || r == utf8.RuneError && size == 1 {
				t.Fatalf("%q holds %U at %d", out, r, i)
			}
			i += size
		}
		var back map[string]string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		if want := string([]rune(s)); back["text"] != want {
			t.Errorf("decoded %q, want %q", back["text"], want)
		}
	})
}
