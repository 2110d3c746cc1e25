package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Key is the GGUF metadata key holding GGUFValue in every file bitnet-convert
// writes.
const Key = "bitnet_convert.version"

// Info is what the build recorded about the binary.
type Info struct {
	// Module is the main module's version: a tag such as "v1.2.3", a
	// pseudo-version, or "(devel)" when the build recorded none.
	Module string
	// Revision is the commit (vcs.revision) and Modified whether the tree
	// had uncommitted changes (vcs.modified); Revision is "" when the build
	// is not stamped.
	Revision string
	Modified bool
	// Go is the toolchain that built the binary ("go1.26.8").
	Go string
}

// Read returns the running binary's Info.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi)
}

// fromBuildInfo extracts Info from bi (nil: a binary without build info).
func fromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Module: "(devel)", Go: runtime.Version()}
	if bi == nil {
		return in
	}
	if bi.Main.Version != "" {
		in.Module = bi.Main.Version
	}
	if bi.GoVersion != "" {
		in.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// GGUFValue is the value stored under Key: the module version, followed by
// " (revision R)" or " (revision R, modified)" when the build is stamped.
func (in Info) GGUFValue() string {
	if in.Revision == "" {
		return in.Module
	}
	mod := ""
	if in.Modified {
		mod = ", modified"
	}
	return fmt.Sprintf("%s (revision %s%s)", in.Module, in.Revision, mod)
}

// String is what `bitnet-convert --version` prints after the program name:
// GGUFValue, then the toolchain and target, e.g.
// "v1.2.3 (revision 0123abcd…) built with go1.26.8 for linux/amd64".
func (in Info) String() string {
	return fmt.Sprintf("%s built with %s for %s/%s", in.GGUFValue(), in.Go, runtime.GOOS, runtime.GOARCH)
}
