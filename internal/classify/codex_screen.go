package classify

import (
	"errors"
	"regexp"
	"strings"
)

// Codex's TUI screen (docs/agents/codex.md §7, §8.1), as `tmux capture-pane -p`
// shows it; the samples are in testdata/codex/screens.
var (
	// codexBoxMarks are on screen while an approval or question waits:
	// Enter there would answer it.
	codexBoxMarks = []string{
		"Would you like to",                       // run a command, make edits, grant permissions, send input
		"Press enter to confirm or esc to cancel", // every approval modal
		"to submit answer",                        // request_user_input
		"Type your answer",
	}
	// codexWorkingMark is in the status line while a turn runs.
	codexWorkingMark = "esc to interrupt"
	// codexComposerPlaceholders are what the empty composer shows; 0.98.0
	// shows one of its example prompts, picked at random (docs/agents/codex.md §8.2).
	codexComposerPlaceholders = []string{"Ask Codex to do anything", "Ask a follow-up question",
		"Explain this codebase", "Summarize recent commits", "Implement {feature}",
		"Find and fix a bug in @filename", "Write tests for @filename", "Improve documentation in @filename",
		"Run /review on my current changes", "Use /skills to list available skills"}
)

// codexPrompt starts the composer line and every echoed prompt above it.
const codexPrompt = "›"

// codexScreenReady decides from a captured screen whether Codex sits idle
// at its composer with nothing to answer on screen; what the composer
// holds is readCodexComposer's to say.
func codexScreenReady(screen string) error {
	for _, mark := range codexBoxMarks {
		if strings.Contains(screen, mark) {
			return errors.New("codex: an approval or question is open on screen")
		}
	}
	if strings.Contains(screen, codexWorkingMark) {
		return errors.New("codex: a turn is running (\"esc to interrupt\" on screen)")
	}
	c := readCodexComposer(screen, Caret{})
	if !c.Seen {
		return errors.New("codex: no input prompt on screen")
	}
	if codexMenuChoice.MatchString(c.Draft) {
		return errors.New("codex: a menu is open on screen")
	}
	return nil
}

// codexMenuChoice is the highlighted line of a menu Codex opens in place
// of its composer ("› 1. Try new model").
var codexMenuChoice = regexp.MustCompile(`^[0-9]+\. `)

// readCodexComposer reads Codex's composer: the lowest line that starts
// with "›", and the lines under it indented by two spaces, up to a blank
// line. The empty composer shows a placeholder.
func readCodexComposer(screen string, _ Caret) Composer {
	lines := screenLines(screen)
	start := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), codexPrompt) {
			start = i
			break
		}
	}
	if start < 0 {
		return Composer{}
	}
	body := []string{cutIndent(strings.TrimPrefix(strings.TrimSpace(lines[start]), codexPrompt), 1)}
	for _, l := range lines[start+1:] {
		if strings.TrimSpace(l) == "" || !strings.HasPrefix(l, "  ") {
			break
		}
		body = append(body, cutIndent(l, 2))
	}
	c := Composer{Seen: true, Draft: draftOf(body)}
	switch {
	case isPlaceholder(c.Draft, codexComposerPlaceholders):
		c.Draft = ""
	case pastedLabel(c.Draft):
		c.Draft, c.Pasted = "", true
	}
	return c
}
