package watch

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBatchLinesHoldUntilReleased: a batch's lines are its own until it is
// released, however much is read meanwhile; once released, their memory
// serves later batches, whose lines are whole and their own; a line of a
// released batch, wrongly held, reads as zeros while its block waits.
func TestBatchLinesHoldUntilReleased(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "")
	r := startRun(t, options(claudeSources(root)))

	const rounds, perRound = 8, 100
	line := func(round, i int) string {
		return fmt.Sprintf("round %d line %d %s", round, i, strings.Repeat(string(rune('a'+round)), 500+i))
	}
	type round struct {
		batches []Batch
		lines   [][]byte
	}
	var got []round
	for k := range rounds {
		var text strings.Builder
		for i := range perRound {
			text.WriteString(line(k, i) + "\n")
		}
		appendTo(t, file, text.String()) // 50 KB: more than one block
		var rd round
		deadline := time.After(wait)
		for len(rd.lines) < perRound {
			select {
			case b := <-r.batches:
				rd.batches = append(rd.batches, b)
				for _, rec := range b.Records {
					if !rec.Checkpoint {
						rd.lines = append(rd.lines, rec.Line)
					}
				}
			case <-deadline:
				t.Fatalf("round %d: %d of %d lines", k, len(rd.lines), perRound)
			}
		}
		got = append(got, rd)
		if k > 3 { // the rounds from the fourth on are released once the next is read
			for _, b := range got[k-1].batches {
				b.Release()
				b.Release() // a second release gives nothing back twice
			}
		}
		for i, l := range rd.lines {
			if string(l) != line(k, i) {
				t.Fatalf("round %d line %d reads %.40q", k, i, l)
			}
		}
	}
	for k := range 3 {
		for i, l := range got[k].lines {
			if string(l) != line(k, i) {
				t.Fatalf("round %d, held, line %d reads %.40q after later rounds were read", k, i, l)
			}
		}
	}
	for _, b := range got[0].batches {
		b.Release()
	}
	for i, l := range got[0].lines {
		if len(l) != len(line(0, i)) || len(bytes.Trim(l, "\x00")) != 0 {
			t.Fatalf("released line %d reads %.40q, want zeros", i, l)
		}
	}
	for i, l := range got[1].lines {
		if string(l) != line(1, i) {
			t.Fatalf("round 1, held, line %d reads %.40q after round 0 was released", i, l)
		}
	}
}

// TestLineArenaCopies: lines copied into one arena are apart (a line's
// capacity ends where it does), long lines get memory of their own, and
// releasing an arena again does nothing.
func TestLineArenaCopies(t *testing.T) {
	a := &lineArena{}
	var lines [][]byte
	for i := range 200 {
		lines = append(lines, a.copy([]byte(strings.Repeat(string(rune('a'+i%26)), i*7))))
	}
	long := a.copy(bytes.Repeat([]byte{'L'}, arenaLineMax+1))
	if len(a.blocks) < 2 {
		t.Fatalf("%d blocks for 139 KB of lines", len(a.blocks))
	}
	for i, l := range lines {
		_ = append(l, '!') // cannot reach the next line
		if want := strings.Repeat(string(rune('a'+i%26)), i*7); string(l) != want || cap(l) != len(l) {
			t.Fatalf("line %d: %d bytes, capacity %d", i, len(l), cap(l))
		}
	}
	a.release()
	a.release()
	if a.blocks != nil {
		t.Fatalf("blocks kept after release")
	}
	if len(bytes.Trim(long, "L")) != 0 || len(long) != arenaLineMax+1 {
		t.Fatal("a long line is cleared with the arena's blocks")
	}
	if l := (*lineArena)(nil).copy([]byte("x")); string(l) != "x" {
		t.Fatalf("no arena: %q", l)
	}
}
