package codegen

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
)

// Output file names under the output directory, as bitnet.cpp expects them.
const (
	HeaderPath = "include/bitnet-lut-kernels.h"
	ConfigPath = "include/kernel_config.ini"
)

// Generate validates ks for arch and writes outdir/include/bitnet-lut-kernels.h
// and outdir/include/kernel_config.ini, creating include/ when missing. Both
// files are rendered before anything touches the disk and each is written
// atomically (temp file + fsync + rename), so an invalid set writes nothing
// and a failure never leaves a partial file. Existing files are replaced.
func Generate(arch string, ks []Kernel, outdir string) error {
	hdr, err := Header(arch, ks)
	if err != nil {
		return err
	}
	ini := KernelConfig(ks)
	dir := filepath.Join(outdir, "include")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := atomicfile.WriteFile(filepath.Join(outdir, HeaderPath), hdr, true); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(outdir, ConfigPath), ini, true)
}
