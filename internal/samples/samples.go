// Package samples locates the agent records captured from the real CLIs and
// kept in the repo (internal/classify/testdata/samples), for tests and
// benchmarks of every package.
package samples

import (
	"path/filepath"
	"runtime"
)

// Dir returns the path of parts below the samples folder, e.g.
// Dir("claude", "EXPECTED.tsv").
func Dir(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", "classify", "testdata", "samples"}, parts...)...)
}
