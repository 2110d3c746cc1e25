package badinput

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// H8: requant wrote, with exit 0, files its own run refuses. It now runs
// the runtime loader's checks on the planned output and refuses, on one
// line naming the key or tensor, before writing anything.
func h8Cases() []badCase {
	requant := func(p string) []string {
		return []string{"requant", p, "--outtype", "tq2_0", "--outfile", filepath.Join(filepath.Dir(p), "o.gguf")}
	}
	i2s := func(p string) []string {
		return []string{"requant", p, "--outtype", "i2_s", "--outfile", filepath.Join(filepath.Dir(p), "o.gguf")}
	}
	return []badCase{
		{"H8 requant hidden_activation gelu", ggufFrom(testutil.SetKV("bitnet.hidden_activation", gguf.String("gelu")), requant),
			1, []string{"the tq2_0 output would not load (nothing written)", "key bitnet.hidden_activation", "gelu"}},
		{"H8 requant missing ffn_norm", gg(func(t *testing.T) []byte {
			return renameTensor(t, "blk.1.ffn_norm.weight", "blk.1.ffn_nrm.weight")
		}, i2s), 1, []string{"tensor blk.1.ffn_norm.weight", "missing"}},
		{"H8 requant missing ffn_sub_norm", gg(func(t *testing.T) []byte {
			return renameTensor(t, "blk.0.ffn_sub_norm.weight", "blk.0.ffn_sb_norm.weight")
		}, requant), 1, []string{"tensor blk.0.ffn_sub_norm.weight", "missing"}},
		{"H8 requant rope.dimension_count 32", ggufFrom(testutil.SetKV("bitnet.rope.dimension_count", gguf.Uint32(32)), requant),
			1, []string{"rope.dimension_count 32"}},
		{"H8 requant rope.dimension_count 63", ggufFrom(testutil.SetKV("bitnet.rope.dimension_count", gguf.Uint32(63)), requant),
			1, []string{"rope.dimension_count 63"}},
		{"H8 requant rope.dimension_count 96", ggufFrom(testutil.SetKV("bitnet.rope.dimension_count", gguf.Uint32(96)), requant),
			1, []string{"rope.dimension_count 96"}},
		{"H8 requant Q8_0 output_norm", gg(func(t *testing.T) []byte {
			return retype(t, "output_norm.weight", gguf.TypeQ8_0)
		}, requant), 1, []string{"tensor output_norm.weight", "Q8_0"}},
		{"H8 requant Q4_0 token_embd", gg(func(t *testing.T) []byte {
			return retype(t, "token_embd.weight", gguf.TypeQ4_0)
		}, requant), 1, []string{"tensor token_embd.weight", "Q4_0"}},
	}
}

// retype returns the tiny I2_S GGUF with tensor name declared as typ (its
// data cut to the new size).
func retype(t *testing.T, name string, typ gguf.Type) []byte {
	t.Helper()
	f, err := reader.Open(tinyI2S)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	infos := append([]gguf.TensorInfo(nil), f.Tensors...)
	for i := range infos {
		if infos[i].Name == name {
			infos[i].Type = typ
		}
	}
	var buf bytes.Buffer
	w, err := writer.New(&buf, f.KVs, infos, f.Alignment)
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range infos {
		d, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		n, err := gguf.NBytes(ti.Type, ti.Ne)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteTensor(i, d[:n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestH8RequantRefusesWhatRunRefuses(t *testing.T) {
	for _, c := range h8Cases() {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			args := c.setup(t, root)
			before := snapshot(t, root)
			code, _, stderr := runMain(args...)
			if code != c.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, c.code, stderr)
			}
			checkOneLine(t, strings.ReplaceAll(stderr, root, "ROOT"), c.want)
			if d := diffSnapshots(before, snapshot(t, root)); d != "" {
				t.Errorf("the run changed the tree: %s", d)
			}
		})
	}
}

// TestH20RequantTrailingOnes: requant refused tensors with trailing 1-dims
// (ne [256 512 1 1]) that run accepts; it accepts them the same way, and
// run loads what it writes.
func TestH20RequantTrailingOnes(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "ones.gguf")
	writeFile(t, in, editInfos(t, func(ti *gguf.TensorInfo) {
		switch ti.Name {
		case "token_embd.weight":
			ti.Ne = append(ti.Ne, 1, 1)
		case "blk.0.attn_q.weight", "blk.1.ffn_down.weight":
			ti.Ne = append(ti.Ne, 1)
		case "output_norm.weight", "blk.0.attn_norm.weight":
			ti.Ne = append(ti.Ne, 1)
		}
	}))
	if code, _, stderr := runMain("run", "-m", in, "--ids", "1,2", "-n", "1"); code != 0 {
		t.Fatalf("run on the input: exit %d: %s", code, stderr)
	}
	for _, typ := range []string{"tq2_0", "i2_s", "f16"} {
		out := filepath.Join(root, "o-"+typ+".gguf")
		if code, _, stderr := runMain("requant", in, "--outtype", typ, "--outfile", out); code != 0 {
			t.Fatalf("requant --outtype %s: exit %d: %s", typ, code, stderr)
		}
		if code, _, stderr := runMain("run", "-m", out, "--ids", "1,2", "-n", "1"); code != 0 {
			t.Errorf("run on the %s output: exit %d: %s", typ, code, stderr)
		}
	}
}
