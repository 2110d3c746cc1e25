// Package cli holds the cobra command tree of bitnet-convert. Each command has
// an options struct and a constructor that only parses flags; the work lives
// in a plain function that tests call directly (the cli/cli pattern).
package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/bench"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/codegen"
	dummycmd "github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/dummy"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/embed"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/gguf2hf"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/gpupack"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/hf2gguf"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/inspect"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/interrupt"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/perplexity"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/requant"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/run"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/tokenize"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	verifycmd "github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/verify"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
	"github.com/bitnet-convert/bitnet-convert/internal/version"
)

// UsageError marks a bad invocation; Main exits 2 for it. Command packages
// (which cannot import this package) use usage.Error / usage.Errorf, the same
// type.
type UsageError = usage.Error

// NewRootCmd builds the bitnet-convert command tree writing to stdout and
// stderr.
func NewRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "bitnet-convert",
		Short:         "Convert BitNet b1.58 checkpoints to GGUF, generate TL1/TL2 kernels, verify the result",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Read().String(),
	}
	root.SetVersionTemplate("bitnet-convert {{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		// A number flag given a non-number: one line naming the flag and
		// what it accepts, not pflag's strconv wording.
		if e := flagx.InvalidValue(err); e != err {
			return e
		}
		return &UsageError{Err: err}
	})
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return refuseDash(cmd) }
	for _, newCmd := range commands {
		root.AddCommand(newCmd())
	}
	return root
}

// commands lists the constructors of every subcommand, one line each.
var commands = []func() *cobra.Command{
	func() *cobra.Command { return hf2gguf.NewCmd(nil) },
	func() *cobra.Command { return requant.NewCmd(nil) },
	func() *cobra.Command { return verifycmd.NewCmd(nil) },
	func() *cobra.Command { return inspect.NewCmdInspect(nil) },
	func() *cobra.Command { return tokenize.NewCmdTokenize(nil) },
	func() *cobra.Command { return run.NewCmdRun(nil) },
	func() *cobra.Command { return perplexity.NewCmdPerplexity(nil) },
	func() *cobra.Command { return bench.NewCmdBench(nil) },
	func() *cobra.Command { return codegen.NewCmdCodegen(nil) },
	func() *cobra.Command { return embed.NewCmdEmbed(nil) },
	func() *cobra.Command { return dummycmd.NewCmdDummy(nil) },
	func() *cobra.Command { return gguf2hf.NewCmd(nil) },
	func() *cobra.Command { return gpupack.NewCmd(nil) },
}

// Main runs the command line args and returns the process exit code: 0 on
// success, 1 on failure, 2 on bad usage, 128 + the signal's number when a
// stop signal interrupted the command (130 for Ctrl-C, 143 for SIGTERM; see
// interrupt.NotifyContext). Errors are printed as one line
// prefixed "bitnet-convert: ".
//
// A panic in a command is a bug; Main recovers it as a last resort and
// prints one line naming the command instead of a Go stack trace, with exit
// code 1.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	// A mapped input that shrinks faults on the next read; as a panic it
	// is recovered below as one "was the file changed?" line (H1).
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if err := osx.FaultError(r); err != nil {
				fmt.Fprintf(stderr, "bitnet-convert: %v\n", err)
				code = 1
				return
			}
			fmt.Fprintf(stderr, "bitnet-convert: internal error in %q: %v; this is a bug, please report it with the command line\n", commandName(args), r)
			code = 1
		}
	}()
	interrupt.Reset()
	out := &stdoutWriter{w: stdout}
	root := NewRootCmd(out, stderr)
	root.SetArgs(llamaLongSpellings(root, args))
	err := root.Execute()
	if err == nil && out.err != nil {
		// The report is lost (stdout on a full disk, a closed pipe):
		// that is a failure even though the work was done (defect H11).
		err = out.err
	}
	if err == nil {
		return 0
	}
	var ue *UsageError
	usageErr := errors.As(err, &ue) || isCobraUsage(err)
	if usageErr {
		// A llama.cpp flag we lack: say what to use instead.
		if hint := llamaFlagHint(root, args); hint != "" {
			err = errors.New(hint)
		}
	}
	fmt.Fprintf(stderr, "bitnet-convert: %v\n", err)
	if sig := interrupt.Received(); sig != nil {
		// 130 for Ctrl-C, 143 for SIGTERM, as a shell reports a process
		// the signal killed (defect H29).
		return interrupt.ExitCode(sig)
	}
	if usageErr {
		return 2
	}
	return 1
}

// pathFlags are the flags that name a file to read or write. "-" (stdin or
// stdout) is meaningful only for the text flags (-f/--file of perplexity
// and tokenize, --stdin) and for --kl-divergence-base when --kl-divergence
// reads it; elsewhere it used to mean a file named "-" for some flags and
// nothing for others (defect H21). The one rule: "-" is stdin where a flag
// says so, a usage error everywhere else.
var pathFlags = []string{"model", "gguf", "hf", "ref-gguf", "metadata", "kernel-config", "config", "outfile", "out", "outdir", "dump-logits", "kl-divergence-base", "from-config"}

// refuseDash is the root's PersistentPreRunE: a path flag given as "-"
// is a usage error naming the flag.
func refuseDash(cmd *cobra.Command) error {
	for _, name := range pathFlags {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed || f.Value.String() != "-" {
			continue
		}
		if name == "kl-divergence-base" {
			if kld := cmd.Flags().Lookup("kl-divergence"); kld != nil && kld.Value.String() == "true" {
				continue // read from stdin, as llama-perplexity does
			}
		}
		return usage.Errorf("--%s -: standard input and output are not supported here; give a file path (\"-\" means stdin only for -f/--file and for --kl-divergence-base with --kl-divergence)", name)
	}
	return nil
}

// stdoutWriter passes writes to w and keeps the first error, so that Main
// fails when a command's text report could not be written (the commands'
// Fprintf calls do not check).
type stdoutWriter struct {
	w   io.Writer
	err error
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil && s.err == nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "write /dev/stdout: …" names the device, not the stream
		}
		s.err = fmt.Errorf("write stdout: %w", err)
	}
	return n, err
}

// commandName returns the subcommand named by args (its first argument that
// is not a flag), or "bitnet-convert" when there is none.
func commandName(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return "bitnet-convert"
}
