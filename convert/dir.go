package convert

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
)

// ConvertDir converts the checkpoint in dir to the GGUF file outPath. The
// output is written to a temp file beside outPath, fsynced and renamed, so
// outPath never holds a partial file; on any error or cancellation the temp
// file is removed. An existing outPath is an error unless force is set. With
// dryRun nothing is written and the plan is returned.
//
// With opts.VocabOnly only config.json and the tokenizer files are read
// (NewVocabPlan): a directory without weights is enough.
func ConvertDir(ctx context.Context, dir, outPath string, force, dryRun bool, opts Options) (*Plan, error) {
	if opts.VocabOnly {
		return convertVocabOnly(ctx, dir, outPath, force, dryRun, opts)
	}
	ckpt, err := hf.Open(dir)
	if err != nil {
		return nil, err
	}
	defer ckpt.Close()
	plan, err := NewPlan(ckpt, opts)
	if err != nil {
		return nil, err
	}
	if dryRun {
		return plan, nil
	}
	if err := notAnInput(dir, outPath); err != nil {
		return plan, err
	}
	f, err := atomicfile.Create(outPath, force)
	if err != nil {
		return plan, err
	}
	defer f.Abort()
	if err := Convert(ctx, ckpt, plan, f, opts); err != nil {
		if ctx.Err() != nil {
			return plan, fmt.Errorf("interrupted; %s was not written", outPath)
		}
		// A failed write (disk full, file too large) names the temp file,
		// which is gone by the time the user reads the message: name the
		// output instead.
		return plan, f.NameTarget(err)
	}
	if err := f.Commit(); err != nil {
		return plan, f.NameTarget(err)
	}
	return plan, nil
}

// notAnInput refuses an output path that is one of the files of the input
// directory (the input is only read, even with --force).
func notAnInput(dir, outPath string) error {
	out, err := os.Stat(outPath)
	if err != nil {
		return nil // does not exist yet (or cannot be read: Create reports it)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		if in, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && os.SameFile(in, out) {
			return fmt.Errorf("output %s is the input file %s; the input directory is only read, choose another --outfile", outPath, filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// convertVocabOnly writes the tensor-less file of NewVocabPlan atomically.
func convertVocabOnly(ctx context.Context, dir, outPath string, force, dryRun bool, opts Options) (*Plan, error) {
	plan, err := NewVocabPlan(dir, opts)
	if err != nil || dryRun {
		return plan, err
	}
	if err := notAnInput(dir, outPath); err != nil {
		return plan, err
	}
	f, err := atomicfile.Create(outPath, force)
	if err != nil {
		return plan, err
	}
	defer f.Abort()
	if err := Convert(ctx, nil, plan, f, opts); err != nil {
		return plan, err
	}
	return plan, f.Commit()
}
