//go:build !linux

package memory

// ReleaseProgram does nothing here. On macOS a process's footprint, what
// Activity Monitor shows, leaves out the clean pages of its program file
// (docs/mac.md).
func ReleaseProgram() (int64, error) { return 0, nil }
