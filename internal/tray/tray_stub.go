//go:build darwin && !cgo

package tray

import (
	"context"
	"fmt"
)

// Available reports whether this build can show the icon: a Mac build
// without cgo cannot (docs/platform.md §2).
const Available = false

// Run returns ErrUnavailable at once.
func Run(context.Context, Spec) error {
	return fmt.Errorf("%w: built without tray support", ErrUnavailable)
}
