package memory

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// childEnv makes the test binary the process whose pages are given back:
// it waits for "release" on its input, releases, says how much, and then
// idles, so that reading its memory from outside maps nothing back.
const childEnv = "NUDGE_TEST_RELEASE_CHILD"

// resident reads the smaps of process pid and returns how many kB of the
// mappings codeSpans takes are in its memory, and how many bytes those
// mappings cover.
func resident(t *testing.T, pid int) (kb int, size int64) {
	t.Helper()
	text, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	code, err := codeFiles(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	spans, err := codeSpans(bytes.NewReader(text), code)
	if err != nil {
		t.Fatal(err)
	}
	taken := map[span]bool{}
	for _, s := range spans {
		taken[s] = true
		size += int64(s.end - s.start)
	}
	ours := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		if s, _, _, ok := mapping(sc.Bytes()); ok {
			ours = taken[s]
			continue
		}
		if f := bytes.Fields(sc.Bytes()); ours && len(f) == 3 && string(f[0]) == "Rss:" {
			n, err := strconv.Atoi(string(f[1]))
			if err != nil {
				t.Fatal(err)
			}
			kb += n
		}
	}
	return kb, size
}

func TestReleaseProgram(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		releaseWhenAsked()
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe, "-test.run=^TestReleaseProgram$")
	child.Env = append(os.Environ(), childEnv+"=1")
	in, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	defer in.Close()
	said := bufio.NewScanner(out)
	expect := func(prefix string) string {
		t.Helper()
		for said.Scan() {
			if rest, ok := bytes.CutPrefix(said.Bytes(), []byte(prefix)); ok {
				return string(rest)
			}
		}
		t.Fatalf("the child never said %q", prefix)
		return ""
	}
	expect("ready")
	before, size := resident(t, child.Process.Pid)
	if before == 0 {
		t.Fatal("no page of the program found resident in the child")
	}
	if _, err := io.WriteString(in, "release\n"); err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(expect("released "), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := resident(t, child.Process.Pid)
	t.Logf("program resident in the child: %d kB before, %d kB after; %d kB of mappings released", before, after, n>>10)
	if n != size {
		t.Errorf("released %d kB of mappings, want the %d kB codeSpans finds", n>>10, size>>10)
	}
	// The child only prints a line after the release, but the runtime
	// and that line map back 1–2 MB, a page cache's folio at a time.
	if after*2 > before {
		t.Errorf("program resident: %d kB after, %d kB before: want less than half", after, before)
	}
}

// releaseWhenAsked is the child's side of TestReleaseProgram: code run
// first (as a start does), then the release, then idle until its input
// ends.
func releaseWhenAsked() {
	if !regexp.MustCompile(`^a+b$`).MatchString("aaab") {
		fmt.Println("code run before the release went wrong")
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() || in.Text() != "release" {
		return
	}
	n, err := ReleaseProgram()
	if err != nil {
		fmt.Println("cannot release:", err)
		return
	}
	fmt.Printf("released %d\n", n)
	for in.Scan() {
	}
}
