package hf2gguf

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/schollz/progressbar/v3"

	"github.com/bitnet-convert/bitnet-convert/hub"
)

// resolveInput turns the DIR argument into the checkpoint directory to
// convert:
//   - an existing directory is used as it is, except a Hugging Face cache
//     repository folder (models--org--name), which becomes the snapshot its
//     refs/main names (defect H24);
//   - a path that does not exist but is a repo id (org/name[@revision]) is
//     downloaded into the Hugging Face cache (package hub) and its snapshot
//     is converted; weights are skipped for --vocab-only (defect H28);
//   - anything else fails saying it is neither.
//
// note says what was resolved (printed only when the conversion succeeds).
func resolveInput(ctx context.Context, opts *Options) (dir, note string, err error) {
	arg := opts.Dir
	fi, err := os.Stat(arg)
	if err == nil {
		if !fi.IsDir() {
			return arg, "", nil
		}
		snap, ok, err := hub.CacheRepoSnapshot(arg)
		if !ok {
			return arg, "", nil
		}
		if err != nil {
			return "", "", err
		}
		return snap, fmt.Sprintf("%s is a Hugging Face cache repository: converted the snapshot its refs/main names, %s", arg, snap), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return arg, "", nil // the checkpoint reader names the problem
	}
	ref, perr := hub.ParseRef(arg)
	if perr != nil {
		return "", "", fmt.Errorf("%s: no such directory, and not a Hugging Face repo id (%v); give a checkpoint directory or org/name[@revision]", arg, perr)
	}
	cfg, err := hub.ConfigFromEnv(os.Getenv)
	if err != nil {
		return "", "", err
	}
	c := &hub.Client{Config: cfg}
	var bar *progressbar.ProgressBar
	if opts.StderrIsTerminal && !cfg.Offline {
		c.Progress = func(done, total int64) {
			if bar == nil {
				bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(opts.Stderr), progressbar.OptionSetDescription("downloading "+ref.Repo),
					progressbar.OptionShowBytes(true), progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
			}
			bar.ChangeMax64(total)
			_ = bar.Set64(done)
		}
	}
	snap, err := c.Download(ctx, ref, !opts.VocabOnly)
	if bar != nil {
		_ = bar.Finish()
	}
	if errors.Is(err, hub.ErrRepoNotFound) {
		// It may have been meant as a directory.
		return "", "", fmt.Errorf("%w; there is no directory %s either", err, arg)
	}
	if err != nil {
		return "", "", err
	}
	if cfg.Offline {
		return snap.Dir, fmt.Sprintf("%s: HF_HUB_OFFLINE is set: converted the cached snapshot %s", ref, snap.Dir), nil
	}
	return snap.Dir, fmt.Sprintf("%s: commit %s, %d files in %s (%s downloaded)", ref, snap.Commit, len(snap.Files), snap.Dir, human(uint64(snap.Received))), nil
}
