package wrap

import (
	"bytes"
	"sync"
	"time"
)

// keysSeen follows the keys the person types through the wrapper, so nudge
// never types while they are at the keyboard (docs/behaviour.md §3 "The
// person at the keyboard"): when they last pressed one, and whether they
// typed something since they last pressed Enter or Ctrl-C (which clears
// an agent's prompt). It cannot know what Backspace or an editing key left
// in the prompt, so anything typed counts as unsent until Enter.
type keysSeen struct {
	mu     sync.Mutex
	last   time.Time
	unsent bool
}

// terminalReports are what a terminal sends on its own, not keys: focus
// in and out.
var terminalReports = [][]byte{[]byte("\x1b[I"), []byte("\x1b[O")}

// typed takes a chunk of the person's input.
func (k *keysSeen) typed(chunk []byte, now time.Time) {
	for _, r := range terminalReports {
		chunk = bytes.ReplaceAll(chunk, r, nil)
	}
	if len(chunk) == 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.last = now
	k.unsent = unsentAfter(k.unsent, chunk)
}

// unsentAfter tells whether text is left unsent in the prompt after keys:
// Enter sends it, unless it follows a backslash or ESC (a new line in the
// prompt for Claude Code and others); Ctrl-C clears it.
func unsentAfter(unsent bool, keys []byte) bool {
	for i, b := range keys {
		switch {
		case b == '\r' || b == '\n':
			unsent = i > 0 && (keys[i-1] == '\\' || keys[i-1] == 0x1b) && unsent
		case b == 0x03:
			unsent = false
		default:
			unsent = true
		}
	}
	return unsent
}

// seen is the person's last key and whether they left keys unsent.
func (k *keysSeen) seen() (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.last, k.unsent
}

// quiet tells whether nudge may type now: nothing unsent, and no key in the
// last quietFor.
func (k *keysSeen) quiet(now time.Time, quietFor time.Duration) bool {
	last, unsent := k.seen()
	return !unsent && (last.IsZero() || now.Sub(last) >= quietFor)
}
