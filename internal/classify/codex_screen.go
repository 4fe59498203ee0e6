package classify

import (
	"errors"
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
// at an empty composer with nothing to answer on screen.
func codexScreenReady(screen string) error {
	for _, mark := range codexBoxMarks {
		if strings.Contains(screen, mark) {
			return errors.New("codex: an approval or question is open on screen")
		}
	}
	if strings.Contains(screen, codexWorkingMark) {
		return errors.New("codex: a turn is running (\"esc to interrupt\" on screen)")
	}
	// The composer is the lowest prompt line.
	composer := ""
	for _, line := range strings.Split(screen, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, codexPrompt) {
			composer = strings.TrimSpace(strings.TrimPrefix(l, codexPrompt))
		}
	}
	for _, p := range codexComposerPlaceholders {
		if composer == p {
			return nil
		}
	}
	if composer == "" {
		return errors.New("codex: no input prompt on screen")
	}
	return errors.New("codex: the input prompt is not empty or a menu is open")
}
