package classify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// composerCase is a screen captured from a real CLI in tmux
// (capture-pane -p -N; the caret from #{cursor_x} #{cursor_y} where the
// name says so) and what its prompt holds.
type composerCase struct {
	file  string
	caret Caret
	want  Composer
}

// TestReadComposer reads every captured screen (testdata/<agent>/screens):
// Claude Code 2.1.332, Kimi Code 2.1.0, Codex 0.171.0 and 0.98.0, Gemini CLI 0.61.0.
func TestReadComposer(t *testing.T) {
	const draft = "please also fix the tests in internal/retry and then rerun them all with the race detector on"
	cases := map[string][]composerCase{
		"claude": {
			{file: "idle.txt", want: Composer{Seen: true}},
			{file: "after-error.txt", want: Composer{Seen: true}},
			{file: "cleared.txt", want: Composer{Seen: true}},
			{file: "empty-vim-normal.txt", want: Composer{Seen: true}},
			{file: "draft.txt", want: Composer{Seen: true, Draft: draft}},
			{file: "draft-narrow.txt", want: Composer{Seen: true, Draft: "please also fix the tests in internal/retry\nand then rerun them all with the race detector\non"}},
			{file: "draft-vim-normal.txt", want: Composer{Seen: true, Draft: "i" + draft}},
			{file: "multiline-pasted-narrow.txt", want: Composer{Seen: true, Draft: "first line of my draft\nsecond line of it"}},
			{file: "multiline-typed.txt", want: Composer{Seen: true, Draft: "line one\nline two"}},
			{file: "vim-insert-one-letter-narrow.txt", want: Composer{Seen: true, Draft: "i"}},
			{file: "pasted-vim-normal.txt", want: Composer{Seen: true, Draft: "dd the previous attempt failed; continue"}},
			{file: "spaces-vim-insert.txt", caret: Caret{Row: 37, Col: 5, Known: true}, want: Composer{Seen: true, Draft: "   "}},
			{file: "spaces-vim-insert.txt", caret: Caret{Row: 37, Col: 2, Known: true}, want: Composer{Seen: true}},
		},
		"kimi_code": {
			{file: "idle.txt", want: Composer{Seen: true}},
			{file: "after-retry.txt", want: Composer{Seen: true}},
			{file: "cleared-narrow.txt", want: Composer{Seen: true}},
			{file: "draft.txt", want: Composer{Seen: true, Draft: draft}},
			{file: "draft-narrow.txt", want: Composer{Seen: true, Draft: "please also fix the tests in\ninternal/retry and then rerun them all\nwith the race detector on"}},
			{file: "multiline-pasted.txt", want: Composer{Seen: true, Draft: "first line of my draft\nsecond line of it"}},
			{file: "multiline-pasted-narrow.txt", want: Composer{Seen: true, Draft: "first line of my draft\nsecond line of it"}},
		},
		"gemini": {
			{file: "idle.txt", want: Composer{Seen: true}},
			{file: "after-error.txt", want: Composer{Seen: true}},
			{file: "retrying.txt", want: Composer{Seen: true}},
			{file: "typed-not-sent.txt", want: Composer{Seen: true, Draft: "continue"}},
			{file: "draft.txt", want: Composer{Seen: true, Draft: draft}},
			{file: "draft-narrow.txt", want: Composer{Seen: true, Draft: "please also fix the tests in internal/retry\nand then rerun them all with the race\ndetector on"}},
			{file: "quota-dialog.txt", want: Composer{}},
			{file: "overload-dialog.txt", want: Composer{}},
			{file: "approval-dialog.txt", want: Composer{}},
		},
		"codex": {
			{file: "idle.txt", want: Composer{Seen: true}},
			{file: "idle-after-error.txt", want: Composer{Seen: true}},
			{file: "idle-after-error-0.98.0.txt", want: Composer{Seen: true}},
			{file: "typed-not-sent.txt", want: Composer{Seen: true, Draft: "first message: slow stream"}},
		},
	}
	dirs := map[string]string{"claude": "claude", "kimi_code": "kimi", "codex": "codex", "gemini": "gemini"}
	for agent, list := range cases {
		a, ok := Lookup(agent)
		if !ok || a.ReadComposer == nil {
			t.Fatalf("%s reads no composer", agent)
		}
		seen := map[string]bool{}
		for _, c := range list {
			seen[c.file] = true
			screen, err := os.ReadFile(filepath.Join("testdata", dirs[agent], "screens", c.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := a.ReadComposer(string(screen), c.caret); got != c.want {
				t.Errorf("%s %s (caret %+v): %+v, want %+v", agent, c.file, c.caret, got, c.want)
			}
			if agent == "codex" {
				continue // its screen check refuses a terminal of one byte per cell
			}
			// As GNU screen's hardcopy shows it: one byte per cell.
			lossy := a.ReadComposer(cells(string(screen)), c.caret)
			if lossy.Seen != c.want.Seen || lossy.Empty() != c.want.Empty() || cells(lossy.Draft) != cells(c.want.Draft) {
				t.Errorf("%s %s as one byte per cell: %+v, want %+v", agent, c.file, lossy, c.want)
			}
		}
		if agent == "codex" {
			continue
		}
		files, _ := filepath.Glob(filepath.Join("testdata", dirs[agent], "screens", "*.txt"))
		for _, f := range files {
			if !seen[filepath.Base(f)] {
				t.Errorf("%s: screen %s has no case", agent, f)
			}
		}
	}
}

// TestComposerHolds: Enter is pressed only on a prompt that holds the
// continuation alone, however the agent wraps it.
func TestComposerHolds(t *testing.T) {
	const text = "The previous attempt failed with a provider error. Please continue."
	cases := []struct {
		c    Composer
		want bool
	}{
		{Composer{Seen: true, Draft: text}, true},
		{Composer{Seen: true, Draft: "The previous attempt failed with a\nprovider error. Please continue."}, true},
		{Composer{Seen: true, Pasted: true}, true},
		{Composer{Seen: true, Draft: "fix the bug" + text}, false},
		{Composer{Seen: true, Draft: text + " and the tests"}, false},
		{Composer{Seen: true, Draft: "   " + text}, false},
		{Composer{Seen: true, Draft: "fix\n" + text}, false},
		{Composer{Seen: true}, false},
		{Composer{Draft: text}, false},
	}
	for _, c := range cases {
		if got := c.c.Holds(text); got != c.want {
			t.Errorf("%+v holds the continuation: %v, want %v", c.c, got, c.want)
		}
	}
}

func TestPastedLabel(t *testing.T) {
	for s, want := range map[string]bool{
		"[Pasted text #1]": true, "[Pasted text #12 +40 lines]": true, " [Pasted text #2 +3 lines] ": true,
		"[Pasted text #]": false, "[Pasted text #1] and more": false, "fix [Pasted text #1]": false,
		"[Pasted text #1 +x lines]": false, "[Pasted text #1][Pasted text #2]": false, "": false,
	} {
		if got := pastedLabel(s); got != want {
			t.Errorf("pastedLabel(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzReadComposer: any screen and caret is read without a panic; what is
// not seen has no draft, and a draft never keeps a no-break space.
func FuzzReadComposer(f *testing.F) {
	for _, dir := range []string{"claude", "kimi", "codex"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "screens", "*.txt"))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(b), 37, 5)
		}
	}
	f.Add("──────────\n❯ \n──────────", 1, 2)
	f.Fuzz(func(t *testing.T, screen string, row, col int) {
		for _, a := range Agents() {
			if a.ReadComposer == nil {
				continue
			}
			c := a.ReadComposer(screen, Caret{Row: row, Col: col, Known: row >= 0})
			if !c.Seen && (c.Draft != "" || c.Pasted) {
				t.Fatalf("%s: an unseen prompt has a draft: %+v", a.Name, c)
			}
			if strings.ContainsRune(c.Draft, '\u00a0') {
				t.Fatalf("%s: a no-break space left in %q", a.Name, c.Draft)
			}
		}
	})
}
