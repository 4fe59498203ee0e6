package memory

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// written lives in the program's data, which is the process's own once
// written: giving pages back must never undo a write.
var written = [2]int{1, 2}

// programResident is how many kB of the program file's read-only mappings
// are in this process's memory.
func programResident(t *testing.T, exe string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kb, ours := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if _, perms, path, ok := mapping(sc.Bytes()); ok {
			ours = string(path) == exe && perms[1] == '-'
			continue
		}
		if fs := bytes.Fields(sc.Bytes()); ours && len(fs) == 3 && string(fs[0]) == "Rss:" {
			n, err := strconv.Atoi(string(fs[1]))
			if err != nil {
				t.Fatal(err)
			}
			kb += n
		}
	}
	return kb
}

func TestReleaseProgram(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	written[1] = 42
	before := programResident(t, exe)
	n, err := ReleaseProgram()
	if err != nil {
		t.Fatal(err)
	}
	after := programResident(t, exe)
	t.Logf("program file resident: %d kB before, %d kB after; %d kB of mappings released", before, after, n>>10)
	if n < int64(before)<<10 {
		t.Errorf("released %d kB of mappings, fewer than the %d kB resident", n>>10, before)
	}
	// What runs meanwhile (this count among it) maps some back at once.
	if after*4 > before*3 {
		t.Errorf("program file resident: %d kB after, %d kB before: want a quarter less at least", after, before)
	}
	// The process goes on: code runs again, and written data stays.
	if !regexp.MustCompile(`^a+b$`).MatchString("aaab") {
		t.Error("code run after the release went wrong")
	}
	if written != [2]int{1, 42} {
		t.Errorf("written data %v after the release: want [1 42]", written)
	}
}
