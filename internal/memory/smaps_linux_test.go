package memory

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// daemon.smaps is a running daemon's /proc/self/smaps, trimmed to its
// program file, the C library, the heap, the stack and the vDSO.
const (
	sample   = "testdata/daemon.smaps"
	program  = "/usr/local/bin/nudge"
	cLibrary = "/usr/lib/x86_64-linux-gnu/libc.so.6"
)

func TestProgramSpans(t *testing.T) {
	text, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.ReplaceAll(string(text), program, "/opt/my tools/nudge")
	for _, c := range []struct {
		name, smaps, exe string
		want             []span
	}{
		// Code and read-only data; not the written data after them.
		{"the program", string(text), program, []span{{0x400000, 0xd28000}, {0xd28000, 0x16ef000}}},
		// The C library's relocated part (Anonymous: 16 kB) is its own.
		{"relocations kept", string(text), cLibrary, []span{
			{0x7f349f8d5000, 0x7f349f8fb000}, {0x7f349f8fb000, 0x7f349fa51000}, {0x7f349fa51000, 0x7f349faa4000}}},
		{"a path with spaces", moved, "/opt/my tools/nudge", []span{{0x400000, 0xd28000}, {0xd28000, 0x16ef000}}},
		{"a name it only begins", moved, "/opt/my", nil},
		{"a program file replaced", strings.ReplaceAll(string(text), program+"\n", program+" (deleted)\n"), program, nil},
		{"another program", string(text), "/usr/bin/other", nil},
		{"nothing", "", program, nil},
		// Memory without a file is the process's own, whatever asks.
		{"no file", header("", "r--p") + counts(0, 0), "", nil},
		{"read only", header(program, "r--p") + counts(0, 0), program, []span{{0x7f0000000000, 0x7f0000001000}}},
		// A page written, then swapped out, is the process's own too.
		{"written and swapped out", header(program, "r--p") + counts(0, 8), program, nil},
		{"written", header(program, "r--p") + counts(4, 0), program, nil},
		{"writable, never written", header(program, "rw-p") + counts(0, 0), program, nil},
		{"shared", header(program, "r--s") + counts(0, 0), program, nil},
		// What the record does not say is not taken as nothing.
		{"no Swap line", header(program, "r--p") + "Anonymous:             0 kB\n", program, nil},
		{"no Anonymous line", header(program, "r--p") + "Swap:                  0 kB\n", program, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := programSpans(strings.NewReader(c.smaps), c.exe)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("spans %x, want %x", got, c.want)
			}
		})
	}
}

// header is the first line of a one-page mapping of path in smaps.
func header(path, perms string) string {
	return "7f0000000000-7f0000001000 " + perms + " 00000000 fe:00 42                         " + path + "\n"
}

// counts are the lines of a mapping's record that tell its own pages, in kB.
func counts(anonymous, swap int) string {
	return fmt.Sprintf("Rss:                   4 kB\nAnonymous:      %6d kB\nSwap:           %6d kB\nVmFlags: rd mr mw me\n", anonymous, swap)
}

func FuzzProgramSpans(f *testing.F) {
	text, err := os.ReadFile(sample)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(text, program)
	f.Add([]byte("00400000-00d28000 r-xp 00000000 fe:00 1 /a b\nAnonymous: 4 kB\n"), "/a b")
	f.Fuzz(func(t *testing.T, smaps []byte, exe string) {
		spans, err := programSpans(bytes.NewReader(smaps), exe)
		if err != nil {
			return // a line too long for the scanner
		}
		if !strings.HasPrefix(exe, "/") && len(spans) > 0 {
			t.Fatalf("spans %x of a mapping without a file", spans)
		}
		for _, s := range spans {
			if s.start >= s.end {
				t.Fatalf("empty span %x", s)
			}
		}
		if len(spans) > bytes.Count(smaps, []byte(exe)) {
			t.Fatalf("%d spans, but %q appears fewer times", len(spans), exe)
		}
	})
}
