package dummy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// stubFree makes the output filesystem report free bytes for the test.
func stubFree(t *testing.T, free uint64) {
	t.Helper()
	old := freeSpace
	freeSpace = func(string) (uint64, bool, error) { return free, true, nil }
	t.Cleanup(func() { freeSpace = old })
}

func withKeys(base map[string]any, kv map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range kv {
		out[k] = v
	}
	return out
}

// TestAbsurdShapeRefused: hidden_size 2^31−1 makes a 32002 × (2^31−1)
// embedding (6.9·10^13 elements, over 2^40): Layout and Generate refuse it
// naming the config key, and Generate creates nothing (even with a disk that
// claims to be endless).
func TestAbsurdShapeRefused(t *testing.T) {
	stubFree(t, ^uint64(0))
	m, _ := presets.Get("bitnet_b1_58-large")
	cases := []struct {
		kv   map[string]any
		want []string
	}{
		{map[string]any{"hidden_size": 2147483647, "num_attention_heads": 1}, []string{"embed_tokens.weight", "hidden_size 2147483647", "vocab_size", "2^40"}},
		{map[string]any{"intermediate_size": 2147483647}, []string{"gate_proj.weight", "intermediate_size 2147483647", "check intermediate_size and hidden_size"}},
		{map[string]any{"head_dim": 2147483647}, []string{"q_proj.weight", "num_attention_heads × head_dim"}},
		{map[string]any{"num_hidden_layers": MaxLayers + 1}, []string{"num_hidden_layers 131073", "--layers"}},
	}
	for _, tc := range cases {
		cfg := withKeys(m.Config, tc.kv)
		_, err := Layout(cfg, false)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Layout(%v): %v, want it to name %q", tc.kv, err, w)
			}
		}
		dir := filepath.Join(t.TempDir(), "out")
		if _, err := Generate(context.Background(), dir, Options{Config: cfg}); err == nil || !strings.Contains(err.Error(), tc.want[0]) {
			t.Errorf("Generate(%v): %v, want %q", tc.kv, err, tc.want[0])
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("Generate(%v) created %s", tc.kv, dir)
		}
	}
}

// TestPlanBytesMatchesLayout: the size computed from the rules (used for the
// disk check before the list exists) is the sum of Layout's tensors for
// every preset, bf16 and packed.
func TestPlanBytesMatchesLayout(t *testing.T) {
	for _, m := range presets.All() {
		for _, packed := range []bool{false, true} {
			cfg := withKeys(m.Config, map[string]any{"num_hidden_layers": 3})
			ts, err := Layout(cfg, packed)
			if err != nil {
				continue // e.g. rows not a multiple of 4 when packed
			}
			var sum uint64
			for _, x := range ts {
				sum += x.Bytes()
			}
			got, err := planBytes(cfg, packed)
			if err != nil || got != sum {
				t.Errorf("%s packed=%v: planBytes %d, %v; Layout sums to %d", m.Name, packed, got, err, sum)
			}
		}
	}
}

// TestNoSpace: a checkpoint that does not fit in the free space (with the 5%
// margin) fails before anything is written, naming both sizes, and the
// directory Generate would have created does not exist afterwards.
func TestNoSpace(t *testing.T) {
	m, _ := presets.Get("bitnet_b1_58-large")
	opts := Options{Config: m.Config, Layers: 1, VocabSize: 64}
	cfg, _ := opts.config()
	need, err := planBytes(cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	// Exactly at the margin fits; one byte less free does not.
	fits := uint64(float64(need)/(1-SpaceMargin)) + 1
	for _, tc := range []struct {
		free uint64
		ok   bool
	}{{fits, true}, {need, false}, {need / 2, false}} {
		stubFree(t, tc.free)
		dir := filepath.Join(t.TempDir(), "a", "out")
		_, err := Generate(context.Background(), dir, opts)
		if tc.ok {
			if err != nil {
				t.Errorf("free %d for %d needed: %v", tc.free, need, err)
			}
			continue
		}
		if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "needs") || !strings.Contains(err.Error(), " free (") {
			t.Errorf("free %d for %d needed: %v, want ErrNoSpace naming both sizes", tc.free, need, err)
		}
		if _, err := os.Stat(filepath.Dir(dir)); err == nil {
			t.Errorf("free %d: %s was created", tc.free, filepath.Dir(dir))
		}
	}
}

// TestNoSpaceRealDisk: 100000 layers of the 3B model is about 25 TB, more
// than this machine's real free space (statfs).
func TestNoSpaceRealDisk(t *testing.T) {
	m, _ := presets.Get("bitnet_b1_58-3B")
	dir := filepath.Join(t.TempDir(), "out")
	_, err := Generate(context.Background(), dir, Options{Config: m.Config, Layers: 100000})
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "TB") {
		t.Fatalf("%v, want ErrNoSpace naming terabytes", err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s was created", dir)
	}
}

// TestCancelRemovesCreatedDirs: an interrupted run removes the directories
// it created (here two levels) but keeps one that existed before.
func TestCancelRemovesCreatedDirs(t *testing.T) {
	m, _ := presets.Get("bitnet_b1_58-large")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b")
	if _, err := Generate(ctx, dir, Options{Config: m.Config, Layers: 1, VocabSize: 64}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "a")); !os.IsNotExist(err) {
		t.Errorf("created directory %s/a left behind (%v)", base, err)
	}
	existing := filepath.Join(base, "keep")
	os.Mkdir(existing, 0o755)
	if _, err := Generate(ctx, existing, Options{Config: m.Config, Layers: 1, VocabSize: 64}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if _, err := os.Stat(existing); err != nil {
		t.Errorf("pre-existing --out removed: %v", err)
	}
}

// TestGeometryIsTheConverterRule: Layout sizes tensors with hf.Config.Dims,
// the converter's rule (aliases such as n_embd, head_dim precedence, KV
// heads defaulting to heads), yet still lays out configs hf.Config.Geometry
// refuses, so the converter's refusals can be tested on a real checkpoint.
func TestGeometryIsTheConverterRule(t *testing.T) {
	base := map[string]any{"architectures": []any{"LlamaForCausalLM"}, "n_embd": 256, "intermediate_size": 512,
		"n_head": 4, "head_dim": 128, "vocab_size": 64, "num_hidden_layers": 1}
	cases := []struct {
		name      string
		kv        map[string]any
		q, k      uint64 // q_proj and k_proj rows
		converter bool   // hf.Config.Geometry accepts it
	}{
		{"aliases, head_dim given", nil, 512, 512, true},
		{"head_dim null: hidden/heads", map[string]any{"head_dim": nil}, 256, 256, true},
		{"kv heads", map[string]any{"num_key_value_heads": 2}, 512, 256, true},
		{"heads not a multiple of kv heads", map[string]any{"num_key_value_heads": 3}, 512, 384, false},
		{"no layers", map[string]any{"num_hidden_layers": 0}, 0, 0, false},
	}
	for _, tc := range cases {
		cfg := withKeys(base, tc.kv)
		ts, err := Layout(cfg, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rows := map[string]uint64{}
		for _, x := range ts {
			rows[x.Name] = x.Shape[0]
		}
		if q, k := rows["model.layers.0.self_attn.q_proj.weight"], rows["model.layers.0.self_attn.k_proj.weight"]; q != tc.q || k != tc.k {
			t.Errorf("%s: q rows %d, k rows %d; want %d, %d", tc.name, q, k, tc.q, tc.k)
		}
		_, err = (&hf.Config{Raw: cfg, Path: "config.json"}).Geometry()
		if (err == nil) != tc.converter {
			t.Errorf("%s: hf.Config.Geometry: %v, want accepted=%v", tc.name, err, tc.converter)
		}
	}
}
