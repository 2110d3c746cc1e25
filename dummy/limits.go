package dummy

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// MaxTensorElements is the largest tensor Layout accepts (2^40 elements,
// 2 TiB as bf16): far beyond any real checkpoint (the largest embedding of
// the presets is 262144 × 2560 ≈ 2^29), so a bigger one means a mistyped
// config value, refused before anything is written.
const MaxTensorElements = 1 << 40

// MaxLayers is the largest num_hidden_layers (or Options.Layers) Layout
// accepts: it bounds the memory of the tensor list (about 200 bytes per
// tensor). Real models have at most a few hundred layers.
const MaxLayers = 1 << 17

// SpaceMargin is the share of the free space Generate leaves unused: a
// checkpoint fits only when its size is at most (1 − SpaceMargin) × free.
const SpaceMargin = 0.05

// ErrNoSpace is wrapped when the planned checkpoint does not fit on the
// output filesystem.
var ErrNoSpace = errors.New("not enough free disk space")

// dimKeys names the config.json keys each dim comes from, for errors.
var dimKeys = map[tensormap.Dim]string{
	tensormap.DimHidden:  "hidden_size",
	tensormap.DimQ:       "num_attention_heads × head_dim",
	tensormap.DimKV:      "num_key_value_heads × head_dim",
	tensormap.DimFF:      "intermediate_size",
	tensormap.DimVocab:   "vocab_size",
	tensormap.DimHeadDim: "head_dim",
}

// ruleBytes is the data size of one tensor of shape sh (bf16, or U8 codes
// + a 2-byte weight_scale for a packed projection). It fails, naming the
// config keys, when the tensor has more than MaxTensorElements elements.
func (g Geometry) ruleBytes(name string, role Role, sh tensormap.Shape, packed bool) (uint64, error) {
	n := uint64(1)
	var keys []string
	for _, d := range sh {
		m := d.Size(g.Geometry)
		hi, lo := bits.Mul64(n, m)
		if hi != 0 {
			lo = ^uint64(0)
		}
		n = lo
		keys = append(keys, dimKeys[d]+" "+fmt.Sprint(m))
	}
	if n > MaxTensorElements {
		return 0, fmt.Errorf("config.json: tensor %s would have %d elements (%s), over the limit of 2^40; check %s", name, n, strings.Join(keys, " × "), strings.Join(keyList(sh), " and "))
	}
	if role == Projection && packed {
		return n/4 + 2, nil
	}
	return 2 * n, nil
}

func keyList(sh tensormap.Shape) []string {
	out := []string{dimKeys[sh[0]]}
	if len(sh) > 1 && dimKeys[sh[1]] != out[0] {
		out = append(out, dimKeys[sh[1]])
	}
	return out
}

// planBytes is the tensor data size of the checkpoint Layout(cfg, packed)
// lists, computed from the family's rules without building the list, so a
// huge layer count costs nothing. It returns the errors of Architecture and
// ReadGeometry, and refuses a tensor over MaxTensorElements or more than
// MaxLayers layers, naming the config key. The sum saturates at 2^64−1.
func planBytes(cfg map[string]any, packed bool) (uint64, error) {
	arch, err := Architecture(cfg)
	if err != nil {
		return 0, err
	}
	fam := familyOf(arch, cfg)
	g, err := ReadGeometry(cfg)
	if err != nil {
		return 0, err
	}
	if g.Layers > MaxLayers {
		return 0, fmt.Errorf("config.json: num_hidden_layers %d is over the limit of %d (real models have at most a few hundred); check num_hidden_layers or --layers", g.Layers, MaxLayers)
	}
	var perLayer, global uint64
	// Checked in module order, so the error names the first tensor.
	for _, r := range fam.global[:2] {
		b, err := g.ruleBytes(fam.prefix+r.name, r.role, r.shape, packed)
		if err != nil {
			return 0, err
		}
		global = addSat(global, b)
	}
	for _, r := range fam.layer {
		b, err := g.ruleBytes(fam.prefix+strings.ReplaceAll(r.name, "{i}", "0"), r.role, r.shape, packed)
		if err != nil {
			return 0, err
		}
		perLayer = addSat(perLayer, b)
	}
	if !fam.embeddingModel && !g.Tied {
		head := fam.global[2]
		b, _ := g.ruleBytes(head.name, head.role, head.shape, packed)
		global = addSat(global, b)
	}
	hi, lo := bits.Mul64(perLayer, uint64(g.Layers))
	if hi != 0 {
		lo = ^uint64(0)
	}
	return addSat(global, lo), nil
}

func addSat(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	if c != 0 {
		return ^uint64(0)
	}
	return s
}

// freeSpace returns the bytes available to an unprivileged user on the
// filesystem holding path (osx.FreeSpace); ok is false where the OS cannot
// tell. A variable so tests can simulate a small disk.
var freeSpace = func(path string) (free uint64, ok bool, err error) {
	free, err = osx.FreeSpace(path)
	if errors.Is(err, errors.ErrUnsupported) {
		return 0, false, nil
	}
	return free, err == nil, err
}

// existingAncestor returns dir or its nearest existing ancestor, and the
// topmost missing directory MkdirAll(dir) would create ("" when dir exists).
func existingAncestor(dir string) (exists, created string) {
	p := filepath.Clean(dir)
	for {
		if _, err := os.Stat(p); err == nil {
			return p, created
		}
		created = p
		parent := filepath.Dir(p)
		if parent == p {
			return p, created
		}
		p = parent
	}
}

// checkSpace fails with ErrNoSpace when need bytes (plus SpaceMargin) do
// not fit in the free space of dir's filesystem plus the bytes of the old
// checkpoint files Force will remove (reclaim).
func checkSpace(dir string, need, reclaim uint64) error {
	at, _ := existingAncestor(dir)
	free, ok, err := freeSpace(at)
	if err != nil {
		return fmt.Errorf("%s: free space: %w", at, err)
	}
	if !ok {
		return nil
	}
	avail := addSat(free, reclaim)
	if float64(need) > float64(avail)*(1-SpaceMargin) {
		return fmt.Errorf("%s: %w: the checkpoint needs %s (%d bytes) but %s has %s free (%d bytes, keeping a %.0f%% margin); use fewer --layers, a smaller config or another --out",
			dir, ErrNoSpace, humanBytes(need), need, at, humanBytes(avail), avail, SpaceMargin*100)
	}
	return nil
}

// humanBytes formats n in decimal units (as disk sizes are sold).
func humanBytes(n uint64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	f := float64(n)
	i := 0
	for f >= 1000 && i < len(units)-1 {
		f /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// oldCheckpointBytes is the size of the files prepareDir would remove from
// dir with Force (0 when dir does not exist).
func oldCheckpointBytes(dir string) uint64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n uint64
	for _, e := range ents {
		name := e.Name()
		if name == hf.ConfigFile || name == hf.IndexFile || strings.HasSuffix(name, ".safetensors") {
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
				n = addSat(n, uint64(fi.Size()))
			}
		}
	}
	return n
}
