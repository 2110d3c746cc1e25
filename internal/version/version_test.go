package version

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := []debug.BuildSetting{
		{Key: "-trimpath", Value: "true"},
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-12-01T09:04:40Z"},
		{Key: "vcs.modified", Value: "false"},
	}
	dirty := append(append([]debug.BuildSetting(nil), stamped[:4]...), debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string // GGUFValue
	}{
		{"no build info", nil, "(devel)"},
		{"go run / test", &debug.BuildInfo{Main: debug.Module{Path: "github.com/bitnet-convert/bitnet-convert", Version: "(devel)"}}, "(devel)"},
		{"empty version", &debug.BuildInfo{Main: debug.Module{Path: "m"}}, "(devel)"},
		{"go install @tag", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"build in a clone", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201090440-0123456789ab"}, Settings: stamped},
			"v0.0.0-20261201090440-0123456789ab (revision 0123456789abcdef0123456789abcdef01234567)"},
		{"uncommitted changes", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201090440-0123456789ab+dirty"}, Settings: dirty},
			"v0.0.0-20261201090440-0123456789ab+dirty (revision 0123456789abcdef0123456789abcdef01234567, modified)"},
	} {
		in := fromBuildInfo(tc.bi)
		if got := in.GGUFValue(); got != tc.want {
			t.Errorf("%s: GGUFValue() = %q, want %q", tc.name, got, tc.want)
		}
		want := tc.want + " built with " + in.Go + " for " + runtime.GOOS + "/" + runtime.GOARCH
		if got := in.String(); got != want {
			t.Errorf("%s: String() = %q, want %q", tc.name, got, want)
		}
	}
	if in := fromBuildInfo(&debug.BuildInfo{GoVersion: "go1.26.0"}); in.Go != "go1.26.0" {
		t.Errorf("Go = %q", in.Go)
	}
}

// A test binary is not stamped: Read reports the module as built by go test.
func TestReadInTest(t *testing.T) {
	in := Read()
	if in.Module == "" || in.Go != runtime.Version() {
		t.Errorf("Read() = %+v", in)
	}
}
