// Package version says which bitnet-convert built a binary or a file: the
// module version and, when the build is stamped with version-control
// information, the revision, both from runtime/debug.ReadBuildInfo.
//
// `go install github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert@v1.2.3`
// records v1.2.3; `go build` or `go install ./cmd/bitnet-convert` in a git
// clone records a pseudo-version (v0.0.0-<commit time>-<commit>, "+dirty"
// for uncommitted changes) and stamps vcs.revision and vcs.modified; `go run`
// and test binaries record "(devel)" and no revision.
//
// The GGUF files bitnet-convert writes carry GGUFValue under Key. It holds no
// build or run time, so converting twice with one binary gives byte-identical
// files.
package version
