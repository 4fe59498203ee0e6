package echo

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestProbeIsTheTextsLastLettersAndDigits(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"Please continue where you left off.", "Pleasecontinuewhereyouleftoff"},
		{"probe 8. Your previous attempt failed", "probe8Yourpreviousattemptfailed"},
		{strings.Repeat("abc ", 40) + "the end", "bcabcabcabcabcabcabcabcabctheend"},
		{"grüße → done", "gredone"},
		{"; → …", ""},
	} {
		if got := Of(c.text); string(got) != c.want {
			t.Errorf("Of(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// The screens below are as Claude Code draws a typed text in tmux (❯ and a
// non-breaking space, wrapped and indented) and in GNU screen's hardcopy
// (one byte per cell).
func TestProbeFoundWhereverAScreenWrapsIt(t *testing.T) {
	p := Of("probe 8. Your previous attempt failed with a provider error (the API returned an error or the connection dropped).")
	for _, c := range []struct {
		screen string
		want   int
	}{
		{"❯\u00a0probe 8. Your previous attempt failed with a provider error (the API\n  returned an error or the connection dropped).\n", 1},
		{"o\xa0probe 8. Your previous attempt failed with a provider error (the API returned\n  an error or the connection dropped).\n\n\xe2 Hello\n\no probe 8. Your previous attempt failed with a provider error (the\n  API returned an error or the connection dro\n  pped).", 2},
		{"❯ probe 8. Your previous attempt failed with a provider error (the API\n  returned an error or the conn", 0},
		{"", 0},
	} {
		if got := p.In(c.screen); got != c.want {
			t.Errorf("%q.In(%q) = %d, want %d", p, c.screen, got, c.want)
		}
	}
	if n := Probe("").In("anything at all"); n != 0 {
		t.Errorf("the empty probe is found %d times, want never", n)
	}
}

// A stream finds the probe however the output is cut into pieces, and only
// once all of it came.
func TestStreamFindsTheProbeAcrossPieces(t *testing.T) {
	text := "Please continue where you left off."
	drawn := "\r\n  Please continue where\r\n  you left off.  \r\n"
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		s := NewStream(Of(text))
		rest := drawn
		for rest != "" {
			n := 1 + rng.IntN(len(rest))
			seen := s.Write([]byte(rest[:n]))
			rest = rest[n:]
			// "off" ends the text, and only there
			if all := strings.Contains(drawn[:len(drawn)-len(rest)], "off"); seen != all {
				t.Fatalf("round %d: seen %v with %q still to come", round, seen, rest)
			}
		}
		if !s.Write(nil) {
			t.Fatalf("round %d: the probe was not seen in %q", round, drawn)
		}
	}
	if NewStream(Of(text)).Write([]byte("Please continue where you left")) {
		t.Error("seen before the text's end was drawn")
	}
}

// FuzzStream: fed in two pieces cut anywhere, a stream sees the probe
// exactly when the whole output shows it.
func FuzzStream(f *testing.F) {
	f.Add("Please continue where you left off.", "\x1b[2K  Please continue\r\n  where you left off.", 7)
	f.Add("a", "b", 0)
	f.Add("; → …", "→", 1)
	f.Fuzz(func(t *testing.T, text, output string, cut int) {
		p := Of(text)
		cut = min(max(cut, 0), len(output))
		s := NewStream(p)
		s.Write([]byte(output[:cut]))
		want := p.In(output) > 0 || p == "" && output != ""
		if got := s.Write([]byte(output[cut:])); got != want {
			t.Fatalf("probe %q in %q cut at %d: seen %v, want %v", p, output, cut, got, want)
		}
	})
}
