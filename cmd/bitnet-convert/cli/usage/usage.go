// Package usage holds the bad-invocation error type shared by every
// bitnet-convert command package (it is a leaf package so command packages
// can use it without importing the cli root, which imports them).
package usage

import "fmt"

// Error marks a bad invocation (unknown flag, bad flag value, missing
// argument); cli.Main exits 2 for it and 1 for every other error.
type Error struct{ Err error }

// Error returns the message of the wrapped error.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns a *Error with a formatted message.
func Errorf(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}
