package wrap

import (
	"bytes"
	"testing"
)

func TestPasteModeFollowsTheSwitch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		want   bool
	}{
		{"never switched", []string{"hello\x1b[1mbold\x1b[0m"}, false},
		{"on", []string{"\x1b[?2004h"}, true},
		{"on then off", []string{"\x1b[?2004h", "text", "\x1b[?2004l"}, false},
		{"split across reads", []string{"abc\x1b", "[?20", "04", "h"}, true},
		{"among other modes", []string{"\x1b[?1049;2004;25h"}, true},
		{"other modes only", []string{"\x1b[?1049h\x1b[?25l"}, false},
		{"not private", []string{"\x1b[2004h"}, false},
		{"a longer number", []string{"\x1b[?20040h"}, false},
		{"cancelled", []string{"\x1b[?20\x1804h"}, false},
		{"full reset", []string{"\x1b[?2004h\x1bc"}, false},
		{"restarted sequence", []string{"\x1b[?1\x1b[?2004h"}, true},
		{"overlong parameters dropped", []string{"\x1b[?" + string(bytes.Repeat([]byte("1;"), maxParams)) + "2004h"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p pasteMode
			for _, c := range tc.chunks {
				p.scan([]byte(c), nil)
			}
			if got := p.Bracketed(); got != tc.want {
				t.Errorf("Bracketed() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBracketKeepsTheTextInsideThePaste(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"a'b\"c $x `id`; d\ne", "\x1b[200~a'b\"c $x `id`; d\ne\x1b[201~"},
		{"x\x1b[201~rm -rf\r", "\x1b[200~xrm -rf\r\x1b[201~"},
		{"\x1b[20\x1b[201~1~y", "\x1b[200~y\x1b[201~"},
	} {
		if got := string(bracket([]byte(tc.text))); got != tc.want {
			t.Errorf("bracket(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestScanKeepsWhatIsDrawn(t *testing.T) {
	var p pasteMode
	drawn := []byte{}
	for _, c := range []string{"\x1b[2K\x1b[38;5;24", "6m❯ Please\x1b[0m con", "tinue\r\n\x1b[?2004h  where\x1b", "[1;3Hyou left off."} {
		drawn = p.scan([]byte(c), drawn)
	}
	if want := "❯ Please continue\r\n  whereyou left off."; string(drawn) != want {
		t.Errorf("drawn %q, want %q", drawn, want)
	}
	if !p.Bracketed() {
		t.Error("the switch was missed while keeping what is drawn")
	}
	if got := p.scan([]byte("text"), nil); got != nil {
		t.Errorf("nothing asked, %q kept", got)
	}
}
