package codegen

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
)

// Output file names under the output directory, as bitnet.cpp expects them.
const (
	HeaderPath = "include/bitnet-lut-kernels.h"
	ConfigPath = "include/kernel_config.ini"
)

// Generate validates ks for arch and writes outdir/include/bitnet-lut-kernels.h
// and outdir/include/kernel_config.ini, creating include/ when missing. Both
// files are rendered before anything touches the disk; both are then written
// to temp files beside their targets and fsynced, and only when both are
// complete are they renamed into place (header first). An invalid set
// writes nothing, a failure never leaves a partial file, and existing files
// are replaced.
func Generate(arch string, ks []format.Kernel, outdir string) error {
	hdr, err := Header(arch, ks)
	if err != nil {
		return err
	}
	ini := format.KernelConfig(ks)
	dir := filepath.Join(outdir, "include")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	var files []*atomicfile.File
	defer func() {
		for _, f := range files {
			f.Abort()
		}
	}()
	for _, out := range []struct {
		path string
		data []byte
	}{{HeaderPath, hdr}, {ConfigPath, ini}} {
		path := filepath.Join(outdir, out.path)
		f, err := atomicfile.Create(path, true)
		if err != nil {
			return err
		}
		files = append(files, f)
		if _, err := f.Write(out.data); err != nil {
			return f.NameTarget(fmt.Errorf("write %s: %w", path, err))
		}
	}
	for _, f := range files {
		if err := f.Commit(); err != nil {
			return f.NameTarget(err)
		}
	}
	return nil
}
