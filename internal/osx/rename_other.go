//go:build !linux && !windows

package osx

// renameNoReplace uses link(2) (see renameByLink).
func renameNoReplace(oldpath, newpath string) error { return renameByLink(oldpath, newpath) }
