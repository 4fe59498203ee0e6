package wrap

import (
	"sync"

	"nudge/internal/echo"
)

// shownWatch lets a typing wait until the child drew the text it typed
// (docs/platform.md §7): the output copier hands it what the child draws
// while someone waits.
type shownWatch struct {
	mu     sync.Mutex
	stream *echo.Stream // nil: nobody waits
	shown  chan struct{}
}

// expect starts looking for p in what the child draws from now on; the
// channel closes once it shows (for an empty p, once anything is drawn).
func (w *shownWatch) expect(p echo.Probe) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stream, w.shown = echo.NewStream(p), make(chan struct{})
	return w.shown
}

// stop ends the look started by expect.
func (w *shownWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stream = nil
}

// watching tells whether someone waits, so the copier keeps what is drawn.
func (w *shownWatch) watching() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stream != nil
}

// drew takes what the child drew.
func (w *shownWatch) drew(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stream != nil && w.stream.Write(b) {
		close(w.shown)
		w.stream = nil
	}
}
