package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
)

// PoolingType is the GGUF {arch}.pooling_type value (u32), llama.cpp's
// enum llama_pooling_type: mean 1, cls 2, last 3 (spec conversion.md §6).
type PoolingType uint32

// Pooling types written by the embedding converter.
const (
	PoolingMean PoolingType = 1
	PoolingCLS  PoolingType = 2
	PoolingLast PoolingType = 3
)

// poolingModes maps the sentence-transformers Pooling config keys to the
// GGUF value, in P5's priority order (the first true key wins).
var poolingModes = []struct {
	key string
	typ PoolingType
}{
	{"pooling_mode_mean_tokens", PoolingMean},
	{"pooling_mode_cls_token", PoolingCLS},
	{"pooling_mode_lasttoken", PoolingLast},
}

// unsupportedPoolingModes have no GGUF pooling type.
var unsupportedPoolingModes = []string{"pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens"}

// maxSideFile bounds modules.json and the pooling config.
const maxSideFile = 1 << 20

// stModule is one modules.json entry of a sentence-transformers model.
type stModule struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Type string `json:"type"`
}

// ReadPooling decides the pooling type of the sentence-transformers model in
// dir as bitnet.cpp's embedding converter does (spec §6): the first
// modules.json entry whose type ends in "Pooling" names a directory whose
// config.json sets pooling_mode_mean_tokens (mean), pooling_mode_cls_token
// (cls) or pooling_mode_lasttoken (last), tried in that order. Without
// modules.json, a Pooling module or its config, the result is PoolingMean
// with a warning. Modules after the pooling other than Normalize (e.g. Dense)
// are not converted and give a warning. Errors: unreadable or malformed
// files, a module path leaving dir, a pooling config that only enables modes
// GGUF cannot express (max, mean_sqrt_len, weightedmean) — each names the
// file.
func ReadPooling(dir string) (PoolingType, []string, error) {
	mpath := filepath.Join(dir, "modules.json")
	data, err := readSide(mpath)
	if errors.Is(err, fs.ErrNotExist) {
		return PoolingMean, []string{"no modules.json (sentence-transformers) in " + dir + ": pooling_type mean"}, nil
	}
	if err != nil {
		return 0, nil, err
	}
	var mods []stModule
	if err := json.Unmarshal(data, &mods); err != nil {
		return 0, nil, fmt.Errorf("%s is not a JSON list of modules: %v", mpath, err)
	}
	var warns []string
	at := -1
	for i, m := range mods {
		if strings.HasSuffix(m.Type, "Pooling") {
			at = i
			break
		}
	}
	if at < 0 {
		return PoolingMean, []string{mpath + " has no Pooling module: pooling_type mean"}, nil
	}
	for _, m := range mods[at+1:] {
		if !strings.HasSuffix(m.Type, "Normalize") {
			warns = append(warns, fmt.Sprintf("%s: module %q (%s) after the pooling is not converted; the GGUF's embeddings are the pooled, L2-normalised hidden states", mpath, m.Name, m.Type))
		}
	}
	p := filepath.ToSlash(filepath.Clean(mods[at].Path))
	if filepath.IsAbs(mods[at].Path) || p == ".." || strings.HasPrefix(p, "../") {
		return 0, nil, fmt.Errorf("%s: pooling module path %q leaves the model directory", mpath, mods[at].Path)
	}
	cpath := filepath.Join(dir, filepath.FromSlash(p), "config.json")
	data, err = readSide(cpath)
	if errors.Is(err, fs.ErrNotExist) {
		return PoolingMean, append(warns, "no "+cpath+": pooling_type mean"), nil
	}
	if err != nil {
		return 0, nil, err
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		return 0, nil, fmt.Errorf("%s is not a JSON object: %v", cpath, err)
	}
	for _, m := range poolingModes {
		if b, _ := cfg[m.key].(bool); b {
			return m.typ, warns, nil
		}
	}
	for _, k := range unsupportedPoolingModes {
		if b, _ := cfg[k].(bool); b {
			return 0, nil, fmt.Errorf("%s: %s has no GGUF pooling type (supported: mean, cls, lasttoken)", cpath, k)
		}
	}
	return PoolingMean, append(warns, cpath+" enables no pooling mode: pooling_type mean"), nil
}

// readSide reads a small side file, refusing anything over maxSideFile.
func readSide(path string) ([]byte, error) {
	f, err := fsutil.Open(path) // a FIFO would block forever

	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	if st.Size() > maxSideFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSideFile)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}
