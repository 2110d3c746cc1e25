// Package clitest holds what the command packages' flag tests share: the
// constructor of each command takes the function that does the work
// (cli/cli's shape), so a test hands it one that only keeps the parsed
// options, and checks bad invocations for a usage.Error. Tests import it;
// the binary does not.
package clitest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
)

// Parse builds the command with newCmd, runs it on args with its output
// discarded and a run function that only keeps the options, and returns
// them (nil if the command failed before running) and Execute's error.
func Parse[O any](newCmd func(func(*O) error) *cobra.Command, args []string) (*O, error) {
	var got *O
	cmd := newCmd(func(o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return got, err
}

// WantUsage fails t unless err is a usage.Error (exit 2) whose message
// contains want.
func WantUsage(t *testing.T, err error, want string) {
	t.Helper()
	var ue *usage.Error
	if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &ue) {
		t.Fatalf("error %v, want a usage error containing %q", err, want)
	}
}
