package modelfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

// Options are the model flags the runtime commands (run, perplexity, bench,
// embed) share.
type Options struct {
	Cmd          string // the command, for messages ("run")
	Model        string // -m: GGUF file
	KernelConfig string // --kernel-config: kernel_config.ini of a TL1/TL2 file, or ""
	FromLayout   string // --from-layout: I2_S layout of a file that records none, or ""
	Threads      int    // -t/--threads as given (0 = every core, flagx.Threads)
	Arith        string // --arith: bitnet.cpp, mainline or ik ("" = the file's home runtime)
	NoMmap       bool   // --no-mmap: read the file into memory (runtime.Options.NoMmap)
}

// Prepare makes every check of o that needs no model load: -m and
// --kernel-config are regular files, --from-layout agrees with the layout
// the file records (CheckFromLayout, a usage error), and reads the kernel
// configuration, and parses --arith (a usage error). It returns the
// runtime.Options the model opens with. Errors name the flag.
func Prepare(o Options) (runtime.Options, error) {
	rt := runtime.Options{Threads: flagx.Threads(o.Threads), I2SLayout: format.Layout(strings.ToLower(o.FromLayout)), NoMmap: o.NoMmap}
	var err error
	if rt.Arith, err = runtime.ParseArith(o.Arith); err != nil {
		return rt, usage.Errorf("--arith: %v", err)
	}
	if err := fsutil.CheckRegular(o.Model); err != nil {
		return rt, fmt.Errorf("-m/--model: %w", err)
	}
	if err := CheckFromLayout(o.Model, o.FromLayout); err != nil {
		return rt, err
	}
	if o.KernelConfig != "" {
		if err := fsutil.CheckRegular(o.KernelConfig); err != nil {
			return rt, fmt.Errorf("--kernel-config: %w", err)
		}
		ks, err := runtime.ReadKernelConfig(o.KernelConfig)
		if err != nil {
			return rt, err
		}
		rt.TLKernels = ks
	}
	return rt, nil
}

// Load opens the model of o with rt (from Prepare; bench changes Threads
// between loads) through open: runtime.Open, or runtime.OpenEmbedding for
// embed. A failure on a vocab-only file is explained (Explain). The caller
// closes the returned file.
func Load[M any](o Options, rt runtime.Options, open func(string, runtime.Options) (M, *reader.File, error)) (M, *reader.File, error) {
	m, f, err := open(o.Model, rt)
	if err != nil {
		var zero M
		if errors.Is(err, osx.ErrNoMemory) {
			return zero, nil, fmt.Errorf("%w; drop --no-mmap to map the file instead", err)
		}
		return zero, nil, Explain(o.Cmd, o.Model, err)
	}
	return m, f, nil
}

// Open is Prepare then Load: the one way the runtime commands (run,
// perplexity, bench, embed) open their model.
func Open[M any](o Options, open func(string, runtime.Options) (M, *reader.File, error)) (M, *reader.File, runtime.Options, error) {
	rt, err := Prepare(o)
	if err != nil {
		var zero M
		return zero, nil, rt, err
	}
	m, f, err := Load(o, rt, open)
	return m, f, rt, err
}
