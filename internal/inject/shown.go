package inject

import (
	"context"
)

// Screen returns what the place w of the backend named backend shows now,
// once it is sure that w still holds the process it was located for. It
// fails (wrapping ErrNoScreen) when that backend cannot show a screen.
func (i *Injector) Screen(ctx context.Context, backend string, w Where) (string, error) {
	for _, b := range i.backends {
		if b.Name() != backend {
			continue
		}
		if _, ok := b.(Screener); !ok {
			return "", refuse(ErrNoScreen, "%s cannot show the screen", backend)
		}
		if w.PID != 0 {
			if _, err := sameRun(w, w.String()); err != nil {
				return "", err
			}
		}
		return screenOf(ctx, b, w, nil)
	}
	return "", refuse(ErrNoScreen, "backend %q is not in use", backend)
}
