package watch

import (
	"bufio"
	"bytes"
	"testing"
)

// splitAll feeds data to a fresh splitter in the pieces given by cuts and
// returns the lines, their starts and ends, and how many lines were skipped.
func splitAll(t *testing.T, data, cuts []byte, max int) (lines [][]byte, bounds [][2]int64, skipped int) {
	t.Helper()
	s := lineSplitter{max: max, onSkip: func(start, end int64) { skipped++ }}
	br := bufio.NewReaderSize(nil, 16) // small, to cross buffer boundaries often
	written := 0
	for i := 0; written < len(data); i++ {
		n := len(data) - written
		if i < len(cuts) {
			n = min(n, int(cuts[i])+1)
		}
		written += n
		// the file now holds data[:written]; read it from where the splitter stands
		br.Reset(bytes.NewReader(data[s.pos:written]))
		for {
			line, start, end, ok, err := s.next(br, nil)
			if err != nil {
				t.Fatalf("next: %v", err)
			}
			if !ok {
				break
			}
			lines = append(lines, line)
			bounds = append(bounds, [2]int64{start, end})
		}
		if len(s.pending) > max {
			t.Fatalf("holds %d bytes of an unfinished line, cap %d", len(s.pending), max)
		}
		if s.pos != int64(written) {
			t.Fatalf("read up to %d, file has %d", s.pos, written)
		}
	}
	return lines, bounds, skipped
}

// wantLines is the reference: the complete lines of data no longer than max.
func wantLines(data []byte, max int) (lines [][]byte, bounds [][2]int64, skipped int) {
	var at int64
	for {
		i := bytes.IndexByte(data[at:], '\n')
		if i < 0 {
			return lines, bounds, skipped
		}
		line := data[at : at+int64(i)]
		if len(line) > max {
			skipped++
		} else {
			lines = append(lines, line)
			bounds = append(bounds, [2]int64{at, at + int64(i) + 1})
		}
		at += int64(i) + 1
	}
}

func checkSplit(t *testing.T, data, cuts []byte, max int) {
	t.Helper()
	got, gotBounds, gotSkipped := splitAll(t, data, cuts, max)
	want, wantBounds, wantSkipped := wantLines(data, max)
	if len(got) != len(want) || gotSkipped != wantSkipped {
		t.Fatalf("got %d lines (%d skipped), want %d (%d skipped)\ndata %q cuts %v max %d", len(got), gotSkipped, len(want), wantSkipped, data, cuts, max)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) || gotBounds[i] != wantBounds[i] {
			t.Fatalf("line %d: got %q at %v, want %q at %v", i, got[i], gotBounds[i], want[i], wantBounds[i])
		}
	}
}

func TestLineSplitter(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 100)
	cases := []struct {
		name string
		data []byte
		cuts []byte
		max  int
	}{
		{"whole lines", []byte("a\nbb\n\nccc\n"), nil, 10},
		{"partial tail waits", []byte("a\nbb\ncc"), []byte{0, 0, 0}, 10},
		{"byte by byte", []byte("one\ntwo\nthree\n"), bytes.Repeat([]byte{0}, 20), 10},
		{"line exactly at the cap", []byte("12345\n123456\nok\n"), []byte{2, 3}, 5},
		{"long line across reads", append(append([]byte("a\n"), long...), "\nb\n"...), []byte{10, 30, 50, 7}, 20},
		{"long unfinished line", append([]byte("a\n"), long...), []byte{40, 40}, 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkSplit(t, c.data, c.cuts, c.max) })
	}
}

func TestLineSplitterRewind(t *testing.T) {
	s := lineSplitter{max: 100}
	br := bufio.NewReader(bytes.NewReader([]byte("ab\ncd")))
	if line, _, _, ok, _ := s.next(br, nil); !ok || string(line) != "ab" {
		t.Fatalf("first line %q %v", line, ok)
	}
	if _, _, _, ok, _ := s.next(br, nil); ok {
		t.Fatal("an unfinished line came out")
	}
	s.rewind()
	if s.pos != 3 || s.pending != nil {
		t.Fatalf("after rewind pos %d pending %q, want 3 and none", s.pos, s.pending)
	}
	br.Reset(bytes.NewReader([]byte("cd\n")))
	if line, start, end, ok, _ := s.next(br, nil); !ok || string(line) != "cd" || start != 3 || end != 6 {
		t.Fatalf("after rewind got %q %d-%d %v", line, start, end, ok)
	}
}

// FuzzLineSplitter writes arbitrary bytes in arbitrary pieces: exactly the
// complete lines come out, in order, with their offsets.
func FuzzLineSplitter(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte{0}, uint8(8))
	f.Add([]byte("{\"type\":\"x\"}\n{\"partial"), []byte{3, 9, 1}, uint8(4))
	f.Add(bytes.Repeat([]byte("xy\n"), 30), []byte{17, 2, 40}, uint8(1))
	f.Fuzz(func(t *testing.T, data, cuts []byte, max uint8) {
		checkSplit(t, data, cuts, int(max)+1)
	})
}
