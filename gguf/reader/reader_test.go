package reader

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// raw assembles GGUF bytes by hand, for inputs our writer refuses to make.
type raw struct{ b []byte }

func (r *raw) u32(v uint32) *raw { r.b = binary.LittleEndian.AppendUint32(r.b, v); return r }
func (r *raw) u64(v uint64) *raw { r.b = binary.LittleEndian.AppendUint64(r.b, v); return r }
func (r *raw) str(s string) *raw { r.u64(uint64(len(s))); r.b = append(r.b, s...); return r }
func (r *raw) header(version uint32, nTensors, nKV uint64) *raw {
	r.b = append(r.b, "GGUF"...)
	return r.u32(version).u64(nTensors).u64(nKV)
}
func (r *raw) tensor(name string, typ gguf.Type, off uint64, ne ...uint64) *raw {
	r.str(name).u32(uint32(len(ne)))
	for _, d := range ne {
		r.u64(d)
	}
	return r.u32(uint32(typ)).u64(off)
}
func (r *raw) pad(align int) *raw {
	for len(r.b)%align != 0 {
		r.b = append(r.b, 0)
	}
	return r
}
func (r *raw) zeros(n int) *raw { r.b = append(r.b, make([]byte, n)...); return r }

// smallFile writes a valid file with two KVs and two F32 tensors.
func smallFile(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("bitnet")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Strings([]string{"<s>", "", "日本"})},
		{Key: "test.u16", Value: gguf.Uint16(7)},
	}
	tensors := []gguf.TensorInfo{
		{Name: "a", Type: gguf.TypeF32, Ne: []uint64{3}},
		{Name: "b", Type: gguf.TypeF32, Ne: []uint64{2, 2}},
	}
	w, err := writer.New(&buf, kvs, tensors, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensor(0, make([]byte, 12)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensor(1, bytes.Repeat([]byte{1}, 16)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSamples reads the GGUF files other tools wrote.
func TestSamples(t *testing.T) {
	t.Parallel()
	f, err := Open("../../testdata/gguf-samples/llama-2-tiny-random.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.KVs) != 18 || len(f.Tensors) != 12 || f.Version != 3 || f.Arch() != "llama" {
		t.Fatalf("llama-2-tiny-random: %d KVs, %d tensors, v%d, arch %q; want 18, 12, v3, llama", len(f.KVs), len(f.Tensors), f.Version, f.Arch())
	}
	if f.DataOffset != 724416 {
		t.Errorf("data offset %d, want 724416", f.DataOffset)
	}
	toks, _ := f.Get("tokenizer.ggml.tokens")
	if s, ok := toks.V.([]string); !ok || len(s) != 32000 || s[0] != "<unk>" || s[1] != "<s>" || s[2] != "</s>" || s[3] != "<0x00>" {
		t.Errorf("tokens: %T of %d", toks.V, len(toks.V.([]string)))
	}
	if v, ok := f.Float("llama.attention.layer_norm_rms_epsilon"); !ok || float32(v) != 1e-5 {
		t.Errorf("rms eps = %v, %v", v, ok)
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || emb.Type != gguf.TypeF16 || len(emb.Ne) != 2 || emb.Ne[0] != 8 || emb.Ne[1] != 32000 || emb.Offset != 0 {
		t.Errorf("token_embd.weight = %+v", emb)
	}
	data, err := f.TensorData("token_embd.weight")
	if err != nil || len(data) != 8*32000*2 {
		t.Fatalf("token_embd data: %d bytes, %v", len(data), err)
	}
	if _, err := f.TensorData("nope"); !errors.Is(err, ErrNoTensor) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing tensor: %v", err)
	}
	// The last tensor ends exactly at the end of the file.
	last := f.Tensors[len(f.Tensors)-1]
	nb, _ := last.NBytes()
	if got := f.DataOffset + last.Offset + nb; got != 1750560 {
		t.Errorf("last tensor ends at %d, file is 1750560 bytes", got)
	}

	v, err := Open("../../testdata/gguf-samples/ggml-vocab-llama-spm.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if len(v.Tensors) != 0 || len(v.KVs) != 22 {
		t.Errorf("vocab file: %d tensors %d KVs, want 0 and 22", len(v.Tensors), len(v.KVs))
	}
	if n, ok := v.Uint("llama.vocab_size"); !ok || n != 32000 {
		t.Errorf("vocab_size = %d, %v", n, ok)
	}
	if s, _ := v.String("tokenizer.ggml.model"); s != "llama" {
		t.Errorf("tokenizer model %q", s)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.gguf")
	if _, err := Open(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, []byte("GGML0000000000000000000000000000"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bad); !errors.Is(err, ErrBadMagic) || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad magic: %v", err)
	}
	if _, err := Open(dir); err == nil {
		t.Errorf("directory opened")
	}
}

// TestBR28Sparse is BR-28 (a): a tensor at relative offset 2^32+32 in a
// sparse file, written by our writer (the 4 GiB filler is a hole) and read
// back through the mmap reader.
func TestBR28Sparse(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a 4 GiB sparse file")
	}
	path := filepath.Join(t.TempDir(), "sparse.gguf")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	tensors := []gguf.TensorInfo{
		{Name: "tiny", Type: gguf.TypeF32, Ne: []uint64{8}},
		{Name: "hole", Type: gguf.TypeI8, Ne: []uint64{1 << 32}},
		{Name: "far", Type: gguf.TypeF32, Ne: []uint64{8}},
	}
	w, err := writer.New(sparseWriter{fh}, nil, tensors, 0)
	if err != nil {
		t.Fatal(err)
	}
	if off := w.Tensors()[2].Offset; off != 1<<32+32 {
		t.Fatalf("far tensor at relative offset %d, want %d", off, uint64(1<<32+32))
	}
	want := make([]float32, 8)
	var tiny, far []byte
	for i := range want {
		want[i] = float32(i) + 0.25
		tiny = binary.LittleEndian.AppendUint32(tiny, math.Float32bits(-want[i]))
		far = binary.LittleEndian.AppendUint32(far, math.Float32bits(want[i]))
	}
	if err := w.WriteTensor(0, tiny); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensorFrom(1, zeroReader{}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensor(2, far); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(int64(w.HeaderSize() + w.DataSize())); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := f.TensorData("far")
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])); got != want[i] {
			t.Errorf("far[%d] = %v, want %v", i, got, want[i])
		}
	}
	if ti, _ := f.Tensor("far"); ti.Offset != 1<<32+32 {
		t.Errorf("read offset %d", ti.Offset)
	}
}

// zeroReader yields zeros; sparseWriter turns a copy from it into a seek.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type sparseWriter struct{ f *os.File }

func (s sparseWriter) Write(p []byte) (int, error) { return s.f.Write(p) }

func (s sparseWriter) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if _, zero := lr.R.(zeroReader); zero {
			n := lr.N
			if _, err := s.f.Seek(n, io.SeekCurrent); err != nil {
				return 0, err
			}
			lr.N = 0
			return n, nil
		}
	}
	return io.Copy(s.f, r)
}

// TestBR28I2S is BR-28 (e): I2_S tensors of our own file read back as type
// I2_S id 36 with n/4 + 32 bytes, scale at n/4.
func TestBR28I2S(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	tensors := []gguf.TensorInfo{{Name: "blk.0.attn_q.weight", Type: gguf.TypeI2S, Ne: []uint64{256, 128}}}
	w, err := writer.New(&buf, []gguf.KV{{Key: "general.architecture", Value: gguf.String("bitnet")}}, tensors, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 256*128/4+32)
	binary.LittleEndian.PutUint32(data[256*128/4:], math.Float32bits(0.75))
	if err := w.WriteTensor(0, data); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	ti := f.Tensors[0]
	if ti.Type.String() != "I2_S" || uint32(ti.Type) != 36 {
		t.Errorf("type %s(%d), want I2_S(36)", ti.Type, uint32(ti.Type))
	}
	got, _ := f.TensorData(ti.Name)
	if len(got) != 8224 {
		t.Errorf("I2_S [256,128] stored %d bytes, want 256*128/4+32 = 8224", len(got))
	}
	off, ok := gguf.ScaleOffset(ti.Type, ti.Ne)
	if !ok || math.Float32frombits(binary.LittleEndian.Uint32(got[off:])) != 0.75 {
		t.Errorf("scale at %d not read back", off)
	}
}

// TestBadInputs checks each malformed file is rejected with the right
// sentinel and an error naming what is wrong.
func TestBadInputs(t *testing.T) {
	t.Parallel()
	// A good two-tensor file, then variations.
	good := func(mod func(r *raw)) []byte {
		r := &raw{}
		r.header(3, 2, 1).str("general.architecture").u32(uint32(gguf.ValueString)).str("bitnet")
		if mod != nil {
			mod(r)
			return r.b
		}
		r.tensor("a", gguf.TypeF32, 0, 4).tensor("b", gguf.TypeF32, 32, 4).pad(32).zeros(48)
		return r.b
	}
	if _, err := Parse(good(nil)); err != nil {
		t.Fatalf("good file rejected: %v", err)
	}
	cases := []struct {
		name    string
		data    []byte
		want    error  // errors.Is target, nil for any error
		mention string // must appear in the message
	}{
		{"empty", nil, ErrTruncated, "magic"},
		{"bad magic", []byte("GGJT\x03\x00\x00\x00" + strings.Repeat("\x00", 16)), ErrBadMagic, "GGJT"},
		{"version 1", (&raw{}).header(1, 0, 0).b, ErrVersion, "1"},
		{"version 4", (&raw{}).header(4, 0, 0).b, ErrVersion, "4"},
		{"big endian", append([]byte("GGUF\x00\x00\x00\x03"), make([]byte, 16)...), ErrVersion, "big-endian"},
		{"huge kv count", (&raw{}).header(3, 0, 1<<60).b, ErrTruncated, "kv count"},
		{"huge tensor count", (&raw{}).header(3, 1<<60, 0).b, ErrTruncated, "tensor count"},
		{"huge string length", (&raw{}).header(3, 0, 1).u64(1 << 60).zeros(16).b, ErrTruncated, "kv 0"},
		{"huge string value", (&raw{}).header(3, 0, 1).str("k").u32(uint32(gguf.ValueString)).u64(1 << 60).zeros(8).b, ErrTruncated, "read kv 0 (k)"},
		{"huge array count", (&raw{}).header(3, 0, 1).str("k").u32(uint32(gguf.ValueArray)).u32(uint32(gguf.ValueUint64)).u64(1 << 60).zeros(16).b, ErrTruncated, "array"},
		{"huge string array", (&raw{}).header(3, 0, 1).str("k").u32(uint32(gguf.ValueArray)).u32(uint32(gguf.ValueString)).u64(1 << 61).zeros(16).b, ErrTruncated, "array"},
		{"unknown value type", (&raw{}).header(3, 0, 1).str("weird").u32(13).zeros(8).b, gguf.ErrValueType, "weird"},
		{"unknown array element", (&raw{}).header(3, 0, 1).str("weird").u32(uint32(gguf.ValueArray)).u32(99).u64(1).zeros(8).b, gguf.ErrValueType, "weird"},
		{"nested array", (&raw{}).header(3, 0, 1).str("nest").u32(uint32(gguf.ValueArray)).u32(uint32(gguf.ValueArray)).u64(0).zeros(8).b, gguf.ErrValueType, "nest"},
		{"duplicate key", (&raw{}).header(3, 0, 2).str("k").u32(uint32(gguf.ValueUint8)).zeros(1).str("k").u32(uint32(gguf.ValueUint8)).zeros(1).b, gguf.ErrDuplicateKey, "k"},
		{"architecture not a string", (&raw{}).header(3, 0, 1).str("general.architecture").u32(uint32(gguf.ValueUint32)).u32(3).b, gguf.ErrValueType, "key general.architecture: a uint32"},
		{"bad alignment", (&raw{}).header(3, 0, 1).str("general.alignment").u32(uint32(gguf.ValueUint32)).u32(48).b, ErrAlignment, "general.alignment"},
		{"unknown tensor type", good(func(r *raw) { r.tensor("a", gguf.TypeF32, 0, 4).tensor("blk.9.q", 77, 32, 4).pad(32).zeros(64) }), gguf.ErrUnknownType, "blk.9.q"},
		{"too many dims", good(func(r *raw) {
			r.tensor("t5", gguf.TypeF32, 0, 1, 1, 1, 1, 1).tensor("b", gguf.TypeF32, 32, 4).pad(32).zeros(64)
		}), nil, "t5"},
		{"negative dim", good(func(r *raw) { r.tensor("a", gguf.TypeF32, 0, 1<<63).tensor("b", gguf.TypeF32, 32, 4).pad(32).zeros(64) }), gguf.ErrOverflow, "(a)"},
		{"block size", good(func(r *raw) { r.tensor("a", gguf.TypeF32, 0, 4).tensor("q8", gguf.TypeQ8_0, 32, 33).pad(32).zeros(96) }), gguf.ErrBlockSize, "q8"},
		{"misaligned offset", good(func(r *raw) { r.tensor("a", gguf.TypeF32, 0, 4).tensor("b", gguf.TypeF32, 16, 4).pad(32).zeros(64) }), ErrAlignment, "(b)"},
		{"overlapping tensors", good(func(r *raw) { r.tensor("a", gguf.TypeF32, 0, 16).tensor("b", gguf.TypeF32, 32, 4).pad(32).zeros(96) }), ErrOverlap, "a [0, 64) and b [32, 48)"},
		{"overlap hidden behind an empty tensor", (&raw{}).header(3, 3, 0).tensor("a", gguf.TypeF32, 0, 16).tensor("z", gguf.TypeF32, 32, 0).
			tensor("c", gguf.TypeF32, 32, 4).pad(32).zeros(96).b, ErrOverlap, "a [0, 64) and c [32, 48)"},
		{"same offset", good(func(r *raw) { r.tensor("a", gguf.TypeF32, 32, 4).tensor("b", gguf.TypeF32, 32, 4).pad(32).zeros(96) }), ErrOverlap, "tensors a"},
		{"duplicate tensor", good(func(r *raw) { r.tensor("a", gguf.TypeF32, 0, 4).tensor("a", gguf.TypeF32, 32, 4).pad(32).zeros(64) }), gguf.ErrDuplicateTensor, "(a)"},
		// BR-28 (c): 2^64−16 bytes, wraps to 0 when padded.
		{"BR-28c size overflow", good(func(r *raw) {
			r.tensor("a", gguf.TypeF32, 0, 4).tensor("blk.0.big", gguf.TypeF32, 32, 4, 1073741823, 1073741825, 1).pad(32).zeros(64)
		}), gguf.ErrOverflow, "blk.0.big"},
		{"element count overflow", good(func(r *raw) {
			r.tensor("a", gguf.TypeF32, 0, 4).tensor("blk.0.huge", gguf.TypeF32, 32, 1<<40, 1<<40).pad(32).zeros(64)
		}), gguf.ErrOverflow, "blk.0.huge"},
		{"offset plus size wraps", good(func(r *raw) {
			r.tensor("a", gguf.TypeF32, 0, 4).tensor("wrap", gguf.TypeF32, math.MaxUint64-31, 16).pad(32).zeros(64)
		}), gguf.ErrOverflow, "wrap"},
		// BR-28 (d): offset + size beyond the end of the file.
		{"BR-28d beyond file", good(func(r *raw) {
			r.tensor("a", gguf.TypeF32, 0, 4).tensor("blk.1.past", gguf.TypeF32, 32, 8).pad(32).zeros(40)
		}), ErrOutOfBounds, "blk.1.past"},
		{"data section beyond file", good(func(r *raw) { r.tensor("a", gguf.TypeF32, 0, 0).tensor("b", gguf.TypeF32, 0, 0) }), ErrOutOfBounds, "data section"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.data)
			if err == nil {
				t.Fatal("accepted")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.mention) {
				t.Errorf("err = %q, should mention %q", err, c.mention)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
		})
	}
}

// TestVersion2 reads a v2 file (same layout as v3).
func TestVersion2(t *testing.T) {
	t.Parallel()
	b := smallFile(t)
	binary.LittleEndian.PutUint32(b[4:], 2)
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 2 || len(f.Tensors) != 2 || f.Arch() != "bitnet" {
		t.Errorf("v2: version %d, %d tensors, arch %q", f.Version, len(f.Tensors), f.Arch())
	}
}

// TestTruncated cuts a small valid file at every length: each prefix that
// ends before the last tensor's data is an error, never a panic.
func TestTruncated(t *testing.T) {
	t.Parallel()
	b := smallFile(t)
	full, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	end := full.DataOffset + full.Tensors[1].Offset + 16 // end of the last tensor's data
	for n := 0; n < len(b); n++ {
		_, err := Parse(b[:n])
		if uint64(n) < end && err == nil {
			t.Errorf("prefix of %d bytes accepted", n)
		}
		if uint64(n) >= end && err != nil {
			t.Errorf("prefix of %d bytes (all data present) rejected: %v", n, err)
		}
	}
}

// TestTensorDataNoCopy checks TensorData is a clipped view of the file.
func TestTensorDataNoCopy(t *testing.T) {
	t.Parallel()
	b := smallFile(t)
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.TensorData("b")
	if len(d) != 16 || cap(d) != 16 || &d[0] != &b[f.DataOffset+f.Tensors[1].Offset] {
		t.Errorf("TensorData: len %d cap %d, not a view of the file", len(d), cap(d))
	}
	sum := sha256.Sum256(d)
	if hex.EncodeToString(sum[:4]) != "cc8cd41c" { // sha256 of sixteen 0x01 bytes (python hashlib)
		t.Errorf("b data sha %x", sum[:4])
	}
}

// TestOpenInMemory: OpenInMemory gives the same KVs, tensors and tensor
// bytes as Open, and keeps Open's errors for a missing file.
func TestOpenInMemory(t *testing.T) {
	const p = "../../testdata/gguf-samples/llama-2-tiny-random.gguf"
	a, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenInMemory(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.KVs) != len(b.KVs) || len(a.Tensors) != len(b.Tensors) || a.DataOffset != b.DataOffset {
		t.Fatalf("in memory: %d KVs %d tensors offset %d; mapped %d, %d, %d", len(b.KVs), len(b.Tensors), b.DataOffset, len(a.KVs), len(a.Tensors), a.DataOffset)
	}
	for _, ti := range a.Tensors {
		x, err1 := a.TensorData(ti.Name)
		y, err2 := b.TensorData(ti.Name)
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Fatalf("tensor %s: %v, %v, equal %v", ti.Name, err1, err2, bytes.Equal(x, y))
		}
	}
	b.Release(nil)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenInMemory("nope.gguf"); err == nil || !strings.Contains(err.Error(), "nope.gguf") {
		t.Errorf("missing file: %v", err)
	}
	// Not a GGUF: the magic is checked before the file is read in, so a
	// large file that is no model is not reported as too large.
	bad := filepath.Join(t.TempDir(), "zeros.bin")
	if err := os.WriteFile(bad, make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenInMemory(bad); !errors.Is(err, ErrBadMagic) || !strings.Contains(err.Error(), bad) {
		t.Errorf("zeros: %v", err)
	}
}

// TestLayoutUnknownSpan: a tensor whose stored id fits none of the id's
// layouts (F32 data under id 40, NVFP4) is read as LayoutUnknown(40) with
// its span as its data (the 16 bytes written and the writer's padding to
// the 32-byte alignment), and Layouts says why; the other tensors are kept.
func TestLayoutUnknownSpan(t *testing.T) {
	t.Parallel()
	file, err := Parse(withTypeID(t, smallFile(t), "b", 40))
	if err != nil {
		t.Fatal(err)
	}
	ti, ok := file.Tensor("b")
	if !ok {
		t.Fatal("tensor b missing")
	}
	if ti.Type != gguf.LayoutUnknown(40) {
		t.Fatalf("type %s, want %s", ti.Type, gguf.LayoutUnknown(40))
	}
	d, err := file.TensorData("b")
	if err != nil {
		t.Fatal(err)
	}
	if want := append(bytes.Repeat([]byte{1}, 16), make([]byte, 16)...); !bytes.Equal(d, want) {
		t.Fatalf("data % x, want % x", d, want)
	}
	if want := "type 40: layout unknown (32 bytes for ne [2 2]"; !strings.HasPrefix(file.Layouts["b"], want) {
		t.Fatalf("Layouts[b] = %q, want prefix %q", file.Layouts["b"], want)
	}
	if a, _ := file.Tensor("a"); a.Type != gguf.TypeF32 {
		t.Fatalf("tensor a type %s, want F32", a.Type)
	}
}
