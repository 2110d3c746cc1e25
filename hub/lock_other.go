//go:build !unix

package hub

import "context"

// lockFile does not lock where flock(2) is missing (Windows): a blob
// written by two processes at once fails its hash check instead of being
// used.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
