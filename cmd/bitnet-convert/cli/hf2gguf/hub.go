package hf2gguf

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/schollz/progressbar/v3"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
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
//   - a repo id whose "org" is a directory here is a mistyped path: it
//     fails as "no such directory" instead of being downloaded;
//   - anything else fails saying it is neither: exit 1 for what reads as a
//     path (looksLikePath), a usage error (exit 2) for a malformed repo id.
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
		err := fmt.Errorf("%s: no such directory, and not a Hugging Face repo id (%v); give a checkpoint directory or org/name[@revision]", arg, perr)
		if looksLikePath(arg) {
			return "", "", err // a missing directory: a failure, exit 1
		}
		// org/name-shaped but malformed ("org//name", "org/na me"): a
		// usage error, exit 2
		return "", "", &usage.Error{Err: err}
	}
	if first, ok := localPrefix(arg); ok {
		// "models/bitnet" where ./models exists is a mistyped path, not
		// a repository to download.
		return "", "", fmt.Errorf("%s: no such directory (%s exists here, so this is read as a path, not a Hugging Face repo id); check the path, or run from another directory to download the repo id", arg, first)
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

// localPrefix reports whether the repo-id-shaped arg (org/name[@rev]) names
// a local path instead: its first segment ("org") is an existing directory
// here. It returns that directory.
func localPrefix(arg string) (string, bool) {
	first, _, _ := strings.Cut(arg, "/")
	fi, err := os.Stat(first)
	return first, err == nil && fi.IsDir()
}

// looksLikePath reports whether arg, which names nothing here, reads as a
// file-system path rather than a repo id: absolute, starting with "." or
// "~", holding a Windows separator, without any "/", or with more than one
// non-empty "/"-segment after org/name ("models/org/name").
func looksLikePath(arg string) bool {
	if filepath.IsAbs(arg) || strings.HasPrefix(arg, ".") || strings.HasPrefix(arg, "~") || strings.ContainsRune(arg, '\\') || !strings.Contains(arg, "/") {
		return true
	}
	segs := strings.Split(arg, "/")
	return len(segs) > 2 && !slices.Contains(segs, "")
}
