package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuild(t *testing.T) {
	for _, c := range []struct {
		info debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "1.4.0"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		}}, "dev-0123456789ab+dirty (2026-12-01T10:00:00Z)"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, "dev-abc"},
	} {
		if got := fromBuild(&c.info); got != c.want {
			t.Errorf("fromBuild(%+v) = %q, want %q", c.info, got, c.want)
		}
	}
}

func TestReleaseWins(t *testing.T) {
	defer func(r string) { Release = r }(Release)
	Release = "2.0.1"
	if got := String(); got != "2.0.1" {
		t.Errorf("String() = %q with Release set", got)
	}
}
