package inspect

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/clitest"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

const goldenDir = "../../../../testdata/golden/tiny-bitnet/gguf"

// rawScale reads the float32 at an absolute file offset, independently of
// the reader: data start + tensor offset + scale offset, all taken from the
// reference listing (outputs/gguf_list_*.txt) and the layout rules.
func rawScale(t *testing.T, path string, abs int) float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b[abs:]))
}

func TestNewCmdInspect(t *testing.T) {
	cases := []struct {
		args     []string
		want     InspectOptions
		usageErr bool
	}{
		{args: []string{"model.gguf"}, want: InspectOptions{Path: "model.gguf"}},
		{args: []string{"--json", "model.gguf"}, want: InspectOptions{Path: "model.gguf", JSON: true}},
		{args: []string{}, usageErr: true},
		{args: []string{"a.gguf", "b.gguf"}, usageErr: true},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			got, err := clitest.Parse(NewCmdInspect, c.args)
			if c.usageErr {
				clitest.WantUsage(t, err, "")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Path != c.want.Path || got.JSON != c.want.JSON || got.Out == nil {
				t.Errorf("options = %+v, want %+v with Out set", got, c.want)
			}
		})
	}
}

// TestInspectTernaryTypes runs inspect on the golden I2_S, TL1 and TL2 files:
// the type names and ids appear and the printed scale of blk.0.attn_q.weight
// is the float32 stored in the file.
func TestInspectTernaryTypes(t *testing.T) {
	cases := []struct {
		file     string
		typ      string
		scaleAbs int // data_start + offset + scale offset, from the listings
	}{
		{"ggml-model-i2_s.gguf", "I2_S(36)", 12896 + 390304 + 256*256/4},
		{"ggml-model-tl1.gguf", "TL1(38)", 12832 + 390304 + 256*256/4},
		// TL2 [256,256]: pad32((256−256)·256/3·5/8 + 256·256/2·4/8) = 16384.
		{"ggml-model-tl2.gguf", "TL2(39)", 12832 + 387584 + 16384},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(goldenDir, c.file)
			want := rawScale(t, path, c.scaleAbs)
			if !(want > 0.01 && want < 1) {
				t.Fatalf("scale read from the file is %v; the test offset is wrong", want)
			}
			var out bytes.Buffer
			if err := inspectRun(&InspectOptions{Path: path, Out: &out}); err != nil {
				t.Fatal(err)
			}
			var line string
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "blk.0.attn_q.weight ") {
					line = l
				}
			}
			f := strings.Fields(line)
			if len(f) != 7 || f[1] != c.typ { // name type [K, M] offset bytes scale
				t.Fatalf("attn_q line %q: want 7 fields with type %s", line, c.typ)
			}
			got, err := strconv.ParseFloat(f[6], 32)
			if err != nil || float32(got) != want {
				t.Errorf("printed scale %s, file holds %v", f[6], want)
			}

			out.Reset()
			if err := inspectRun(&InspectOptions{Path: path, JSON: true, Out: &out}); err != nil {
				t.Fatal(err)
			}
			var r struct {
				Tensors []struct {
					Name   string   `json:"name"`
					Type   string   `json:"type"`
					TypeID uint32   `json:"type_id"`
					Ne     []uint64 `json:"ne"`
					Bytes  uint64   `json:"bytes"`
					Scale  *float32 `json:"scale"`
				} `json:"tensors"`
			}
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, ti := range r.Tensors {
				if ti.Name == "blk.0.attn_q.weight" {
					found = true
					if ti.Type+"("+strconv.Itoa(int(ti.TypeID))+")" != c.typ || ti.Scale == nil || *ti.Scale != want || ti.Bytes != 16416 {
						t.Errorf("json attn_q = %+v, want %s bytes 16416 scale %v", ti, c.typ, want)
					}
				}
				if strings.HasSuffix(ti.Name, "_norm.weight") && ti.Scale != nil {
					t.Errorf("%s: F32 tensor has a scale", ti.Name)
				}
			}
			if !found || len(r.Tensors) != 24 {
				t.Errorf("json has %d tensors, attn_q found %v", len(r.Tensors), found)
			}
		})
	}
}

// TestInspectTextGolden pins the whole text report of the I2_S golden file,
// and checks a few lines written by hand from its reference listing.
func TestInspectTextGolden(t *testing.T) {
	path := filepath.Join(goldenDir, "ggml-model-i2_s.gguf")
	var out bytes.Buffer
	if err := inspectRun(&InspectOptions{Path: path, Out: &out}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"file:         " + path + "\n",
		"version:      3\n",
		"alignment:    32\n",
		"data offset:  12896\n",
		"metadata (24 keys):\n",
		"  general.architecture                     string     \"bitnet\"\n",
		"  bitnet.attention.layer_norm_rms_epsilon  float32    1e-05\n",
		"  general.file_type                        uint32     40 (MOSTLY_I2_S in bitnet.cpp)\n",
		"  tokenizer.ggml.tokens                    [string]   512 items: \"<unk>\" \"<s>\" \"</s>\" \"<0x00>\" \"<0x01>\" \"<0x02>\" \"<0x03>\" \"<0x04>\" …\n",
		"  tokenizer.ggml.token_type                [int32]    512 items: 2 3 3 6 6 6 6 6 …\n",
		"  tokenizer.ggml.add_bos_token             bool       true\n",
		"tensors (24):\n",
		"  token_embd.weight           F16(1)    [256, 512]  0       262144\n",
		"  blk.0.ffn_down.weight       I2_S(36)  [512, 256]  263168  32800   ",
		"  output_norm.weight          F32(0)    [256]       567744  1024\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	golden := filepath.Join("testdata", "i2_s.txt.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("text report differs from %s (-want +got):\n%s", golden, diff)
	}
}

// TestInspectJSON checks the JSON form on the F32 golden file: header
// fields, scalar values of each type, array previews of 8 entries.
func TestInspectJSON(t *testing.T) {
	path := filepath.Join(goldenDir, "ggml-model-f32.gguf")
	var out bytes.Buffer
	if err := inspectRun(&InspectOptions{Path: path, JSON: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Path       string `json:"path"`
		Version    int    `json:"version"`
		Alignment  int    `json:"alignment"`
		DataOffset int    `json:"data_offset"`
		KVs        []struct {
			Key   string `json:"key"`
			Type  string `json:"type"`
			Value any    `json:"value"`
			Elem  string `json:"elem_type"`
			Count *int   `json:"count"`
			First []any  `json:"first"`
		} `json:"kvs"`
		Tensors []json.RawMessage `json:"tensors"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Path != path || r.Version != 3 || r.Alignment != 32 || r.DataOffset != 12832 || len(r.KVs) != 23 || len(r.Tensors) != 24 {
		t.Fatalf("header = %+v", r)
	}
	seen := map[string]bool{}
	for _, kv := range r.KVs {
		seen[kv.Key] = true
		switch kv.Key {
		case "general.architecture":
			if kv.Value != "bitnet" || kv.Type != "string" {
				t.Errorf("%s = %v (%s)", kv.Key, kv.Value, kv.Type)
			}
		case "bitnet.attention.layer_norm_rms_epsilon":
			if v, ok := kv.Value.(float64); !ok || float32(v) != 1e-5 {
				t.Errorf("%s = %v", kv.Key, kv.Value)
			}
		case "tokenizer.ggml.add_eos_token":
			if kv.Value != false || kv.Type != "bool" {
				t.Errorf("%s = %v (%s); false must not be omitted", kv.Key, kv.Value, kv.Type)
			}
		case "general.file_type":
			if kv.Value != float64(0) {
				t.Errorf("%s = %v; zero must not be omitted", kv.Key, kv.Value)
			}
		case "tokenizer.ggml.tokens":
			want := []any{"<unk>", "<s>", "</s>", "<0x00>", "<0x01>", "<0x02>", "<0x03>", "<0x04>"}
			if kv.Count == nil || *kv.Count != 512 || kv.Elem != "string" || !cmp.Equal(kv.First, want) || kv.Value != nil {
				t.Errorf("tokens = count %v elem %s first %v", kv.Count, kv.Elem, kv.First)
			}
		}
	}
	if len(seen) != 23 {
		t.Errorf("%d distinct keys", len(seen))
	}
}

// TestInspectErrors: a missing or damaged file is one line naming the file,
// and not a usage error (so the CLI exits 1).
func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	trunc := filepath.Join(dir, "trunc.gguf")
	b, err := os.ReadFile(filepath.Join(goldenDir, "ggml-model-i2_s.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trunc, b[:500000], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.gguf"), trunc, filepath.Join(goldenDir, "kernel_config_tl2.ini")} {
		var out bytes.Buffer
		err := inspectRun(&InspectOptions{Path: path, Out: &out})
		if err == nil {
			t.Fatalf("%s: no error", path)
		}
		var ue *usage.Error
		if errors.As(err, &ue) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") || out.Len() != 0 {
			t.Errorf("%s: err = %q (usage %v), output %d bytes", path, err, errors.As(err, &ue), out.Len())
		}
	}
}

// TestInspectOwnI2S is BR-28 (e): a GGUF of ours with an I2_S tensor,
// written through atomicfile and our writer, is reported by inspect as
// I2_S with bitnet.cpp's id 36, n/4 + 32 bytes and the scale we stored.
func TestInspectOwnI2S(t *testing.T) {
	path := filepath.Join(t.TempDir(), "own-i2_s.gguf")
	af, err := atomicfile.Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer af.Abort()
	tensors := []gguf.TensorInfo{
		{Name: "blk.0.attn_norm.weight", Type: gguf.TypeF32, Ne: []uint64{128}},
		{Name: "blk.0.ffn_down.weight", Type: gguf.TypeI2S, Ne: []uint64{512, 128}},
	}
	w, err := writer.New(af, []gguf.KV{{Key: "general.architecture", Value: gguf.String("bitnet")}}, tensors, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensor(0, make([]byte, 512)); err != nil {
		t.Fatal(err)
	}
	q := make([]byte, 512*128/4+32)
	binary.LittleEndian.PutUint32(q[512*128/4:], math.Float32bits(0.0625))
	if err := w.WriteTensor(1, q); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := af.Commit(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := inspectRun(&InspectOptions{Path: path, Out: &out}); err != nil {
		t.Fatal(err)
	}
	want := "  blk.0.ffn_down.weight   I2_S(36)  [512, 128]  512     16416  0.0625\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}

// The other runtimes' ternary types show their scales through the format
// layer: TQ2_0 one f16 per 256-block, IQ2_BN one f32 per row, with the
// range of the golden values (llama-quantize / ik_llama.cpp files).
func TestInspectEcosystemScales(t *testing.T) {
	for _, c := range []struct{ file, line string }{
		{"tiny-bitnet-tq2_0.gguf", "blk.0.attn_k.weight         TQ2_0(35)  [256, 128]"},
		{"tiny-b158-h512-iq2_bn.gguf", "blk.0.attn_k.weight         IQ2_BN(135)  [512, 256]"},
	} {
		var out bytes.Buffer
		if err := inspectRun(&InspectOptions{Path: "../../../../testdata/golden/ecosystems/" + c.file, Out: &out}); err != nil {
			t.Fatal(err)
		}
		var got string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "blk.0.attn_k.weight") {
				got = l
			}
		}
		want := map[string]string{"tiny-bitnet-tq2_0.gguf": "(128 scales)", "tiny-b158-h512-iq2_bn.gguf": "(256 scales)"}[c.file]
		if !strings.Contains(got, want) || !strings.Contains(got, "..") {
			t.Errorf("%s: line %q lacks %q", c.file, got, want)
		}
	}
}

// general.file_type of bitnet.cpp's TL files is named from its llama.h
// table, as 40 is for I2_S (39 was printed bare), and so are the TQ files of
// llama.cpp and the IQ files of ik_llama.cpp (36/37, 136/137 were bare).
func TestInspectNamesTLFileType(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"../../ecosystems/tiny-bitnet-tq1_0.gguf", "  general.file_type                        uint32     36 (MOSTLY_TQ1_0 in llama.cpp)\n"},
		{"../../ecosystems/tiny-bitnet-tq2_0.gguf", "  general.file_type                        uint32     37 (MOSTLY_TQ2_0 in llama.cpp)\n"},
		{"../../ecosystems/tiny-b158-h512-iq1_bn.gguf", "uint32     136 (MOSTLY_IQ1_BN in ik_llama.cpp)\n"},
		{"../../ecosystems/tiny-b158-h512-iq2_bn.gguf", "uint32     137 (MOSTLY_IQ2_BN in ik_llama.cpp)\n"},
		{"ggml-model-tl1.gguf", "  general.file_type                        uint32     38 (MOSTLY_TL1 in bitnet.cpp)\n"},
		{"ggml-model-tl2.gguf", "  general.file_type                        uint32     39 (MOSTLY_TL2 in bitnet.cpp)\n"},
		{"ggml-model-i2_s.gguf", "  general.file_type                        uint32     40 (MOSTLY_I2_S in bitnet.cpp)\n"},
		{"ggml-model-f32.gguf", "  general.file_type                        uint32     0\n"},
	} {
		var out bytes.Buffer
		if err := inspectRun(&InspectOptions{Path: filepath.Join(goldenDir, tc.file), Out: &out}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s: output lacks %q", tc.file, tc.want)
		}
	}
}
