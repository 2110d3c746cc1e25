package hub

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// maxRefBytes bounds a refs/ file read (it holds one commit hash).
const maxRefBytes = 4096

// readRef returns the commit refs/<rev> of repoDir names, or "" when there
// is no such file.
func readRef(repoDir, rev string) (string, error) {
	p := filepath.Join(repoDir, "refs", filepath.FromSlash(rev))
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRefBytes))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	commit := strings.TrimSpace(string(b))
	if !IsCommit(commit) {
		return "", fmt.Errorf("%s does not hold a commit hash; delete it and run again online", p)
	}
	return commit, nil
}

// writeRef records that rev resolved to commit (refs/<rev>), unless rev is
// the commit itself or the file already says so; the file is replaced
// atomically so that other readers never see half of it.
func writeRef(repoDir, rev, commit string) error {
	if rev == commit {
		return nil
	}
	if old, err := readRef(repoDir, rev); err == nil && old == commit {
		return nil
	}
	p := filepath.Join(repoDir, "refs", filepath.FromSlash(rev))
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return cacheWriteError(p, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".ref-*")
	if err != nil {
		return cacheWriteError(p, err)
	}
	_, werr := tmp.WriteString(commit)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), p)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return cacheWriteError(p, werr)
	}
	return nil
}

// CachedSnapshot returns the snapshot directory of ref in the cache without
// touching the network (HF_HUB_OFFLINE): the revision is looked up in refs/
// unless it is a commit hash. Every file of the snapshot that links into
// blobs/ is checked against the hash its blob is named by. Errors wrap
// ErrNotCached (nothing cached for that revision) or ErrHashMismatch.
func (c Config) CachedSnapshot(ref Ref) (string, error) {
	repoDir := c.RepoDir(ref.Repo)
	commit := ref.Revision
	if !IsCommit(commit) {
		var err error
		commit, err = readRef(repoDir, ref.Revision)
		if err != nil {
			return "", err
		}
		if commit == "" {
			return "", fmt.Errorf("%s is not in the Hugging Face cache (no %s): run once without HF_HUB_OFFLINE, or set HF_HUB_CACHE to the cache that holds it: %w",
				ref, filepath.Join(repoDir, "refs", filepath.FromSlash(ref.Revision)), ErrNotCached)
		}
	}
	snap := filepath.Join(repoDir, "snapshots", commit)
	if fi, err := os.Stat(snap); err != nil || !fi.IsDir() {
		return "", tagf(ErrNotCached, "%s: snapshot %s is not in the Hugging Face cache (%s); run once without HF_HUB_OFFLINE", ref, commit, snap)
	}
	if err := verifySnapshot(snap); err != nil {
		return "", err
	}
	return snap, nil
}

// verifySnapshot checks every file of snap that is a symlink to a blob named
// by a hash we know (sha256 or git SHA-1) against that hash.
func verifySnapshot(snap string) error {
	return filepath.WalkDir(snap, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("%s: %w; delete the snapshot and run again online", p, err)
		}
		etag := filepath.Base(target)
		if filepath.Base(filepath.Dir(target)) != "blobs" || hashKind(etag) == "" {
			return nil
		}
		return verifyFile(target, etag, p)
	})
}

// CacheRepoSnapshot resolves a cache repository directory
// (.../models--org--name, as given by a user who meant the model) to the
// snapshot its refs/main names. ok is false when dir is not a cache
// repository (its name does not start with "models--" or it has no
// snapshots/ directory). Without refs/main, or when refs/main names a
// snapshot that is not there, the error lists the snapshots to pick from.
func CacheRepoSnapshot(dir string) (snap string, ok bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	if !strings.HasPrefix(filepath.Base(abs), "models--") {
		return "", false, nil
	}
	if fi, err := os.Stat(filepath.Join(dir, "snapshots")); err != nil || !fi.IsDir() {
		return "", false, nil
	}
	commit, err := readRef(dir, DefaultRevision)
	if err != nil {
		return "", true, err
	}
	if commit != "" {
		snap = filepath.Join(dir, "snapshots", commit)
		if fi, err := os.Stat(snap); err == nil && fi.IsDir() {
			return snap, true, nil
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
	var snaps []string
	for _, e := range entries {
		if e.IsDir() {
			snaps = append(snaps, filepath.Join(dir, "snapshots", e.Name()))
		}
	}
	sort.Strings(snaps)
	why := "has no refs/main"
	if commit != "" {
		why = "has refs/main = " + commit + " but no such snapshot"
	}
	switch len(snaps) {
	case 0:
		return "", true, fmt.Errorf("%s is a Hugging Face cache repository that %s and no snapshot: download the model again", dir, why)
	case 1:
		return "", true, fmt.Errorf("%s is a Hugging Face cache repository that %s: convert its snapshot %s", dir, why, snaps[0])
	}
	more := ""
	if len(snaps) > 5 {
		more = fmt.Sprintf(" and %d more", len(snaps)-5)
		snaps = snaps[:5]
	}
	return "", true, fmt.Errorf("%s is a Hugging Face cache repository that %s: convert one of its snapshots: %s%s", dir, why, strings.Join(snaps, ", "), more)
}

// hashKind is "sha256" for a 64-hex etag (an LFS file), "sha1" for a
// 40-hex one (a git blob SHA-1), "" for anything else.
func hashKind(etag string) string {
	if _, err := hex.DecodeString(etag); err != nil || strings.ToLower(etag) != etag {
		return ""
	}
	switch len(etag) {
	case 64:
		return "sha256"
	case 40:
		return "sha1"
	}
	return ""
}

// newHash returns the hasher of etag's kind, primed for a file of size bytes
// (git hashes "blob <size>\x00" before the content).
func newHash(etag string, size int64) hash.Hash {
	if hashKind(etag) == "sha256" {
		return sha256.New()
	}
	h := sha1.New()
	h.Write([]byte("blob " + strconv.FormatInt(size, 10) + "\x00"))
	return h
}

// verifyFile checks the file at path against etag; name is what the error
// calls it.
func verifyFile(path, etag, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	h := newHash(etag, fi.Size())
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != etag {
		return tagf(ErrHashMismatch, "%s: the cached blob %s has %s %s, not the %s its name says; delete it and run again online", name, path, hashKind(etag), got, etag)
	}
	return nil
}

// linkSnapshot makes snapshots/<commit>/<file> point at blob: a relative
// symlink (as huggingface_hub makes), or a copy where symlinks are refused
// (Windows without developer mode).
func linkSnapshot(repoDir, commit, file, blob string) error {
	dst := filepath.Join(repoDir, "snapshots", commit, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(dst), 0o777); err != nil {
		return cacheWriteError(dst, err)
	}
	rel, err := filepath.Rel(filepath.Dir(dst), blob)
	if err != nil {
		return err
	}
	if cur, err := os.Readlink(dst); err == nil && cur == rel {
		return nil
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return cacheWriteError(dst, err)
	}
	if err := os.Symlink(rel, dst); err == nil {
		return nil
	}
	return copyFile(blob, dst)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".copy-*")
	if err != nil {
		return cacheWriteError(dst, err)
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return cacheWriteError(dst, err)
	}
	return nil
}
