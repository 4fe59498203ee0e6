package safetext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// EncodeJSON writes v to w as JSON followed by a newline, indented by
// indent ("" for one line), with every character Line would take out
// written as a \u escape: encoding/json escapes C0 but leaves DEL, C1 and
// the bidi controls raw, which a terminal obeys. A reader decodes the
// exact text. Every --json output goes through it.
func EncodeJSON(w io.Writer, v any, indent string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err := w.Write(EscapeJSON(buf.Bytes()))
	return err
}

// EscapeJSON returns the JSON text b (as encoding/json writes it: valid
// UTF-8, C0 escaped) with DEL, C1 and bidi controls written as \u
// escapes. Outside strings JSON holds only ASCII, so each such character
// lies in a string, where its escape reads as the same character.
func EscapeJSON(b []byte) []byte {
	i := bytes.IndexFunc(b, func(r rune) bool { return r >= 0x7f && unsafe(r) })
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if r >= 0x7f && unsafe(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
