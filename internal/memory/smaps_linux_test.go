package memory

import (
	"bytes"
	"fmt"
	"maps"
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

func TestCodeFiles(t *testing.T) {
	text, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, maps string
		want       []string
	}{
		{"the program and the C library", string(text), []string{cLibrary, program}},
		{"a program file replaced", strings.ReplaceAll(string(text), program+"\n", program+" (deleted)\n"), []string{cLibrary}},
		{"data only", header("/var/db/cache", "r--p") + header("/var/db/cache", "rw-s"), nil},
		{"code without a file", header("[vdso]", "r-xp") + header("", "r-xp"), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, err := codeFiles(strings.NewReader(c.maps))
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(code)); !slices.Equal(got, c.want) {
				t.Fatalf("code files %q, want %q", got, c.want)
			}
		})
	}
}

func TestCodeSpans(t *testing.T) {
	text, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.ReplaceAll(string(text), program, "/opt/my tools/nudge")
	// The program's code and read-only data, not the written data after
	// them; the C library's, but not its relocated part (Anonymous: 16 kB).
	programs := []span{{0x400000, 0xd28000}, {0xd28000, 0x16ef000}}
	libraries := []span{{0x7f349f8d5000, 0x7f349f8fb000}, {0x7f349f8fb000, 0x7f349fa51000}, {0x7f349fa51000, 0x7f349faa4000}}
	// code is a page of the program that can run, after the one asked about.
	code, codeSpan := mapped(0x7f0000001000, program, "r-xp")+counts(0, 0), span{0x7f0000001000, 0x7f0000002000}
	asked := span{0x7f0000000000, 0x7f0000001000}
	startedWith := func(files ...string) map[string]bool {
		m := map[string]bool{}
		for _, f := range files {
			m[f] = true
		}
		return m
	}
	for _, c := range []struct {
		name, smaps string
		code        map[string]bool // nil: codeFiles of smaps
		want        []span
	}{
		{"the program and the C library", string(text), nil, append(programs, libraries...)},
		{"a path with spaces", moved, nil, append(programs, libraries...)},
		{"a program file replaced", strings.ReplaceAll(string(text), program+"\n", program+" (deleted)\n"), startedWith(program, cLibrary), libraries},
		{"a library replaced", strings.ReplaceAll(string(text), cLibrary+"\n", cLibrary+" (deleted)\n"), startedWith(program, cLibrary), programs},
		// The loader maps a library's whole span read-only first.
		{"a library loaded since the start", string(text), startedWith(program), programs},
		{"nothing", "", nil, nil},
		// A file's data counts once any of its mappings can run.
		{"read only", header("/opt/nudge", "r--p") + counts(0, 0) + mapped(0x7f0000001000, "/opt/nudge", "r-xp") + counts(0, 0), nil, []span{asked, codeSpan}},
		{"a file without code", header("/var/db/cache", "r--p") + counts(0, 0), nil, nil},
		{"another file's code", header("/var/db/cache", "r--p") + counts(0, 0) + code, nil, []span{codeSpan}},
		// Memory without a file is the process's own.
		{"no file", header("", "r-xp") + counts(0, 0), nil, nil},
		{"named, not a file", header("[vdso]", "r-xp") + counts(0, 0), nil, nil},
		// A page written, then swapped out, is the process's own too.
		{"written and swapped out", header(program, "r--p") + counts(0, 8) + code, nil, []span{codeSpan}},
		{"written", header(program, "r--p") + counts(4, 0) + code, nil, []span{codeSpan}},
		{"writable, never written", header(program, "rw-p") + counts(0, 0) + code, nil, []span{codeSpan}},
		{"shared", header(program, "r--s") + counts(0, 0) + code, nil, []span{codeSpan}},
		// What the record does not say is not taken as nothing.
		{"no Swap line", header(program, "r--p") + "Anonymous:             0 kB\n" + code, nil, []span{codeSpan}},
		{"no Anonymous line", header(program, "r--p") + "Swap:                  0 kB\n" + code, nil, []span{codeSpan}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := c.code
			if files == nil {
				var err error
				if files, err = codeFiles(strings.NewReader(c.smaps)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := codeSpans(strings.NewReader(c.smaps), files)
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
func header(path, perms string) string { return mapped(0x7f0000000000, path, perms) }

// mapped is the first line of a one-page mapping of path at start.
func mapped(start uintptr, path, perms string) string {
	return fmt.Sprintf("%x-%x %s 00000000 fe:00 42                         %s\n", start, start+0x1000, perms, path)
}

// counts are the lines of a mapping's record that tell its own pages, in kB.
func counts(anonymous, swap int) string {
	return fmt.Sprintf("Rss:                   4 kB\nAnonymous:      %6d kB\nSwap:           %6d kB\nVmFlags: rd mr mw me\n", anonymous, swap)
}

func FuzzCodeSpans(f *testing.F) {
	text, err := os.ReadFile(sample)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(text)
	f.Add([]byte("00400000-00d28000 r-xp 00000000 fe:00 1 /a b\nAnonymous: 4 kB\n"))
	f.Fuzz(func(t *testing.T, smaps []byte) {
		files, err := codeFiles(bytes.NewReader(smaps))
		if err != nil {
			return // a line too long for the scanner
		}
		spans, err := codeSpans(bytes.NewReader(smaps), files)
		if err != nil {
			return
		}
		// Each span is a mapping's, private and not writable, of a file
		// that has a mapping that can run.
		type header struct{ perms, path string }
		headers := map[span][]header{}
		code := map[string]bool{}
		for line := range bytes.Lines(smaps) {
			if s, perms, path, ok := mapping(bytes.TrimRight(line, "\n")); ok {
				headers[s] = append(headers[s], header{string(perms), string(path)})
				code[string(path)] = code[string(path)] || perms[2] == 'x'
			}
		}
		for _, s := range spans {
			if !slices.ContainsFunc(headers[s], func(h header) bool {
				return h.perms[1] == '-' && h.perms[3] == 'p' && strings.HasPrefix(h.path, "/") && code[h.path]
			}) {
				t.Fatalf("span %x of %q, want a private, read-only mapping of a code file", s, headers[s])
			}
		}
	})
}
