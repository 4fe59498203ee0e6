// Package version says which build of nudge this is.
package version

import (
	"runtime/debug"
	"strings"
)

// Release is set by release builds:
// -ldflags "-X nudge/internal/version.Release=1.2.3".
var Release string

// String is the release, else the module version `go install` recorded,
// else the source revision the binary was built from (with "+dirty" for
// uncommitted changes), else "dev".
func String() string {
	if Release != "" {
		return Release
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return fromBuild(info)
}

func fromBuild(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return strings.TrimPrefix(v, "v")
	}
	var rev, dirty, at string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		case "vcs.time":
			at = s.Value
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "dev-" + rev[:min(len(rev), 12)] + dirty
	if at != "" {
		v += " (" + at + ")"
	}
	return v
}
