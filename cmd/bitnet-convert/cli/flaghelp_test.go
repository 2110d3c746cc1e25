package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// pflag takes a back-quoted word in a flag's usage as the value
// placeholder of its --help line, so "(`bitnet-convert dummy --preset`
// shows …)" printed "--model bitnet-convert dummy --preset   preset model
// name". No flag of any command may have one: each placeholder is the
// value's type.
func TestFlagUsageHasNoBackquote(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				name, _ := pflag.UnquoteUsage(f)
				t.Errorf("%s --%s: usage %q has a back-quote; --help shows its value as %q", c.CommandPath(), f.Name, f.Usage, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := NewRootCmd(io.Discard, io.Discard)
	if len(root.Commands()) < 10 {
		t.Fatalf("root has %d commands", len(root.Commands()))
	}
	walk(root)
}
