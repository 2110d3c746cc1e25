package hf_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

func TestOpenGolden(t *testing.T) {
	before := snapshot(t, goldenDir)
	c, err := hf.Open(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Tensors) != 24 {
		t.Fatalf("%d tensors, want 24", len(c.Tensors))
	}
	got := names(c)
	if !sort.StringsAreSorted(got) {
		t.Errorf("tensors not in key order: %v", got)
	}
	if got[0] != "model.embed_tokens.weight" || got[23] != "model.norm.weight" {
		t.Errorf("first/last tensor %s, %s", got[0], got[23])
	}
	if len(c.Notices) != 0 || !reflect.DeepEqual(c.Files, []string{"model.safetensors"}) {
		t.Errorf("files %v notices %v", c.Files, c.Notices)
	}
	if h, ok, err := c.Config.Int("hidden_size"); h != 256 || !ok || err != nil {
		t.Errorf("hidden_size = %d %v %v", h, ok, err)
	}
	// Exact values, read independently from the file bytes.
	for _, tc := range []struct {
		name  string
		shape []uint64
		idx   int
		want  float32
	}{
		{"model.embed_tokens.weight", []uint64{512, 256}, 0, 0.047119140625},
		{"model.embed_tokens.weight", []uint64{512, 256}, 131071, 0.1484375},
		{"model.norm.weight", []uint64{256}, 255, 1.1171875},
		{"model.layers.1.self_attn.v_proj.weight", []uint64{128, 256}, 12345, -0.0032806396484375},
		{"model.layers.0.input_layernorm.weight", []uint64{256}, 0, 0.93359375},
	} {
		ref, ok := c.Lookup(tc.name)
		if !ok {
			t.Fatalf("no %s", tc.name)
		}
		if ref.DType != hf.BF16 || !reflect.DeepEqual(ref.Shape, tc.shape) || ref.File != "model.safetensors" {
			t.Errorf("%s: %v %v %s", tc.name, ref.DType, ref.Shape, ref.File)
		}
		d, err := c.Read(ref)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(d.Raw)) != ref.NElements()*2 {
			t.Errorf("%s: %d raw bytes", tc.name, len(d.Raw))
		}
		x, err := d.Float32s(nil)
		if err != nil {
			t.Fatal(err)
		}
		if x[tc.idx] != tc.want {
			t.Errorf("%s[%d] = %v, want %v", tc.name, tc.idx, x[tc.idx], tc.want)
		}
		d.Release()
		if y, _ := d.Float32s(x); y[tc.idx] != tc.want || &y[0] != &x[0] {
			t.Errorf("%s: after Release got %v (dst reused: %v)", tc.name, y[tc.idx], &y[0] == &x[0])
		}
	}
	if _, ok := c.Lookup("lm_head.weight"); ok {
		t.Error("Lookup found a tensor that is not there")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(c.Tensors[0]); err == nil {
		t.Error("Read after Close succeeded")
	}
	if after := snapshot(t, goldenDir); !reflect.DeepEqual(before, after) {
		t.Error("Open/Read modified the input directory")
	}
}

// TestUnalignedData is BR-21: header length 8k+3, a U8 [4,16] tensor, then a
// bf16 [3] tensor at an odd absolute offset.
func TestUnalignedData(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
	header := `{"a.u8":{"dtype":"U8","shape":[4,16],"data_offsets":[0,64]},"b.bf16":{"dtype":"BF16","shape":[3],"data_offsets":[64,70]}}`
	// Pad inside the object (not at the end) until the length is 8k+3.
	for len(header)%8 != 3 {
		header = "{ " + header[1:]
	}
	if len(header)%8 != 3 {
		t.Fatalf("header length %d", len(header))
	}
	data := make([]byte, 70)
	for i := 0; i < 64; i++ {
		data[i] = byte(i * 3)
	}
	// bf16: 1.0 (0x3f80), -2.5 (0xc020), smallest subnormal (0x0001)
	copy(data[64:], []byte{0x80, 0x3f, 0x20, 0xc0, 0x01, 0x00})
	writeFile(t, filepath.Join(dir, "model.safetensors"), rawSafetensors(header, data))
	c, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ref, _ := c.Lookup("b.bf16")
	if ref.Offset%2 != 1 {
		t.Fatalf("bf16 tensor at offset %d, want odd", ref.Offset)
	}
	d, err := c.Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	x, err := d.Float32s(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{1, -2.5, math.Float32frombits(0x00010000)}; !reflect.DeepEqual(x, want) {
		t.Errorf("bf16 values %v, want %v", x, want)
	}
	u, _ := c.Lookup("a.u8")
	du, err := c.Read(u)
	if err != nil {
		t.Fatal(err)
	}
	if len(du.Raw) != 64 || du.Raw[5] != 15 || du.Raw[63] != byte(63*3) {
		t.Errorf("u8 bytes wrong: %v", du.Raw[:8])
	}
	if _, err := du.Float32s(nil); err == nil || !strings.Contains(err.Error(), "a.u8") {
		t.Errorf("Float32s on U8: %v", err)
	}
}

// TestLargeOffset is BR-28b: a sparse safetensors file whose second tensor
// starts 2^32+32 bytes into the data section.
func TestLargeOffset(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
	const off = 1<<32 + 32
	header := `{"big":{"dtype":"F32","shape":[8],"data_offsets":[4294967328,4294967360]},"small":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`
	p := filepath.Join(dir, "model.safetensors")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	head := rawSafetensors(header, nil)
	dataStart := int64(len(head))
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	vals := make([]byte, 32)
	for i := 0; i < 8; i++ {
		b := math.Float32bits(float32(i) + 0.25)
		vals[4*i], vals[4*i+1], vals[4*i+2], vals[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	}
	if _, err := f.WriteAt(vals, dataStart+off); err != nil {
		t.Skipf("cannot create a sparse 4 GiB file here: %v", err)
	}
	f.Close()
	c, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ref, _ := c.Lookup("big")
	if ref.Offset != uint64(dataStart)+off {
		t.Errorf("offset %d", ref.Offset)
	}
	d, err := c.Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := d.Float32s(nil)
	for i, v := range x {
		if v != float32(i)+0.25 {
			t.Fatalf("value %d = %v", i, v)
		}
	}
}

func TestZeroDimTensor(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
	err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), []hf.WriteTensor{
		{Name: "x.weight", DType: hf.U8, Shape: []uint64{1, 4}, Data: hf.RawData([]byte{1, 2, 3, 4})},
		{Name: "x.weight_scale", DType: hf.BF16, Shape: []uint64{}, Data: hf.RawData([]byte{0x40, 0x3f})},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ref, _ := c.Lookup("x.weight_scale")
	if len(ref.Shape) != 0 || ref.NElements() != 1 || ref.Size != 2 {
		t.Fatalf("0-d tensor: shape %v n %d size %d", ref.Shape, ref.NElements(), ref.Size)
	}
	d, _ := c.Read(ref)
	x, err := d.Float32s(nil)
	if err != nil || len(x) != 1 || x[0] != 0.75 {
		t.Errorf("0-d value %v %v", x, err)
	}
}

func TestFloat32sDTypes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
	err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), []hf.WriteTensor{
		{Name: "f16", DType: hf.F16, Shape: []uint64{3}, Data: hf.RawData([]byte{0x00, 0x3c, 0xff, 0x7b, 0x01, 0x80})},
		f32Tensor("f32", []uint64{2}, 3.5, float32(math.Inf(-1))),
		{Name: "i64", DType: "I64", Shape: []uint64{1}, Data: hf.RawData(make([]byte, 8))},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	read := func(name string) []float32 {
		ref, _ := c.Lookup(name)
		d, err := c.Read(ref)
		if err != nil {
			t.Fatal(err)
		}
		x, err := d.Float32s(make([]float32, 1))
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if got, want := read("f16"), []float32{1, 65504, -5.9604645e-08}; !reflect.DeepEqual(got, want) {
		t.Errorf("f16 %v, want %v", got, want)
	}
	if got := read("f32"); got[0] != 3.5 || !math.IsInf(float64(got[1]), -1) {
		t.Errorf("f32 %v", got)
	}
	ref, _ := c.Lookup("i64")
	_, err = c.Read(ref)
	mustContain(t, err, "i64", "I64")
}

func TestOpenErrors(t *testing.T) {
	empty := t.TempDir()
	_, err := hf.Open(empty)
	mustContain(t, err, "config.json", empty)
	if !errors.Is(err, hf.ErrNoCheckpoint) {
		t.Errorf("empty dir error does not wrap ErrNoCheckpoint: %v", err)
	}

	noST := t.TempDir()
	writeFile(t, filepath.Join(noST, "config.json"), []byte(tinyConfig))
	writeFile(t, filepath.Join(noST, "pytorch_model.bin"), []byte("x"))
	_, err = hf.Open(noST)
	mustContain(t, err, "model.safetensors", noST)

	badCfg := t.TempDir()
	writeFile(t, filepath.Join(badCfg, "config.json"), []byte(`{"a":`))
	_, err = hf.Open(badCfg)
	mustContain(t, err, "config.json", "not valid JSON")

	_, err = hf.Open(filepath.Join(empty, "nope"))
	mustContain(t, err, "nope")
}

// TestTrainingFilesIgnored is part of BR-04: trainer leftovers are not model
// files and do not disturb Open.
func TestTrainingFilesIgnored(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
	writeShard(t, filepath.Join(dir, "model.safetensors"), 1, "w")
	for _, n := range []string{"optimizer.pt", "rng_state.pth", "scheduler.pt", "trainer_state.json", "training_args.bin", "tokenizer.json"} {
		writeFile(t, filepath.Join(dir, n), []byte("not a model"))
	}
	c, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !reflect.DeepEqual(names(c), []string{"w"}) || len(c.Notices) != 0 {
		t.Errorf("tensors %v notices %v", names(c), c.Notices)
	}
}

// TestShards covers BR-20 (a)–(e) and the index consistency rules.
func TestShards(t *testing.T) {
	s1, s2 := "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
		var n1, n2 []string
		wm := map[string]string{}
		for i := 0; i < 20; i++ {
			n := "model.layers." + string(rune('a'+i)) + ".weight"
			if i < 12 {
				n1 = append(n1, n)
				wm[n] = s1
			} else {
				n2 = append(n2, n)
				wm[n] = s2
			}
		}
		// Write shard 2 first so file order is not creation order.
		writeShard(t, filepath.Join(dir, s2), 2, n2...)
		writeShard(t, filepath.Join(dir, s1), 1, n1...)
		writeIndex(t, dir, wm)
		return dir
	}
	valueOf := func(t *testing.T, c *hf.Checkpoint, name string) float32 {
		ref, ok := c.Lookup(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		d, err := c.Read(ref)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := d.Float32s(nil)
		return x[0]
	}

	t.Run("a index", func(t *testing.T) {
		dir := setup(t)
		before := snapshot(t, dir)
		c, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if len(c.Tensors) != 20 || !reflect.DeepEqual(c.Files, []string{s1, s2}) {
			t.Fatalf("%d tensors from %v", len(c.Tensors), c.Files)
		}
		if c.Tensors[0].File != s1 || c.Tensors[11].File != s1 || c.Tensors[12].File != s2 {
			t.Errorf("not in file order: %v", c.Tensors)
		}
		if valueOf(t, c, "model.layers.a.weight") != 1 || valueOf(t, c, "model.layers.t.weight") != 2 {
			t.Error("wrong values")
		}
		if !reflect.DeepEqual(before, snapshot(t, dir)) {
			t.Error("input directory modified")
		}
	})
	t.Run("b stray single file", func(t *testing.T) {
		dir := setup(t)
		writeShard(t, filepath.Join(dir, "model.safetensors"), 99, "model.layers.a.weight")
		c, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if valueOf(t, c, "model.layers.a.weight") != 1 {
			t.Error("stray model.safetensors was used")
		}
		if len(c.Notices) != 1 || !strings.Contains(c.Notices[0], "model.safetensors") {
			t.Errorf("notices %q", c.Notices)
		}
	})
	t.Run("c missing shard", func(t *testing.T) {
		dir := setup(t)
		os.Remove(filepath.Join(dir, s2))
		_, err := hf.Open(dir)
		mustContain(t, err, s2, "missing", "model.layers.m.weight", "8 tensor")
	})
	t.Run("d tensor in two shards", func(t *testing.T) {
		dir := setup(t)
		writeShard(t, filepath.Join(dir, s2), 2, "model.layers.a.weight", "model.layers.m.weight", "model.layers.n.weight", "model.layers.o.weight", "model.layers.p.weight", "model.layers.q.weight", "model.layers.r.weight", "model.layers.s.weight", "model.layers.t.weight")
		_, err := hf.Open(dir)
		mustContain(t, err, "model.layers.a.weight", s1, s2)
	})
	t.Run("e no index", func(t *testing.T) {
		dir := setup(t)
		os.Remove(filepath.Join(dir, hf.IndexFile))
		c, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if len(c.Tensors) != 20 || !reflect.DeepEqual(c.Files, []string{s1, s2}) {
			t.Errorf("%d tensors from %v", len(c.Tensors), c.Files)
		}
		if len(c.Notices) != 1 || !strings.Contains(c.Notices[0], hf.IndexFile) {
			t.Errorf("notices %q", c.Notices)
		}
	})
	t.Run("shard tensor missing from index", func(t *testing.T) {
		dir := setup(t)
		writeShard(t, filepath.Join(dir, s2), 2, "model.layers.m.weight", "model.layers.n.weight", "model.layers.o.weight", "model.layers.p.weight", "model.layers.q.weight", "model.layers.r.weight", "model.layers.s.weight", "model.layers.t.weight", "extra.a", "extra.b")
		c, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if len(c.Tensors) != 22 || len(c.Notices) != 1 || !strings.Contains(c.Notices[0], "2 tensor(s)") || !strings.Contains(c.Notices[0], "extra.b") {
			t.Errorf("%d tensors, notices %q", len(c.Tensors), c.Notices)
		}
	})
	t.Run("index names tensor absent from shard", func(t *testing.T) {
		dir := setup(t)
		writeShard(t, filepath.Join(dir, s2), 2, "model.layers.m.weight")
		_, err := hf.Open(dir)
		mustContain(t, err, "model.layers.n.weight", s2)
	})
	t.Run("index puts tensor in the wrong shard", func(t *testing.T) {
		dir := setup(t)
		writeShard(t, filepath.Join(dir, s2), 2, "model.layers.m.weight", "model.layers.n.weight", "model.layers.o.weight", "model.layers.p.weight", "model.layers.q.weight", "model.layers.r.weight", "model.layers.s.weight", "model.layers.t.weight", "model.layers.zz.weight")
		writeShard(t, filepath.Join(dir, s1), 1, "model.layers.a.weight")
		_, err := hf.Open(dir)
		mustContain(t, err, "model.layers.b.weight", s1)
	})
	for _, bad := range []string{"../x.safetensors", "/etc/passwd", "a/../../x.safetensors"} {
		t.Run("shard path "+bad, func(t *testing.T) {
			dir := setup(t)
			writeIndex(t, dir, map[string]string{"w": bad})
			_, err := hf.Open(dir)
			mustContain(t, err, bad)
		})
	}
	t.Run("same shard spelled two ways", func(t *testing.T) {
		dir := setup(t)
		wm := map[string]string{}
		for i := 0; i < 20; i++ {
			n := "model.layers." + string(rune('a'+i)) + ".weight"
			switch {
			case i >= 12:
				wm[n] = s2
			case i%2 == 0:
				wm[n] = "./" + s1
			default:
				wm[n] = s1
			}
		}
		writeIndex(t, dir, wm)
		c, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if len(c.Tensors) != 20 || len(c.Files) != 2 {
			t.Errorf("%d tensors from %v", len(c.Tensors), c.Files)
		}
	})
	t.Run("concurrent reads", func(t *testing.T) {
		dir := setup(t)
		c, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, r := range c.Tensors {
					d, err := c.Read(r)
					if err != nil {
						t.Error(err)
						return
					}
					x, _ := d.Float32s(nil)
					if want := float32(1 + strings.Count(r.File, "00002-of")); x[0] != want {
						t.Errorf("%s = %v, want %v", r.Name, x[0], want)
					}
				}
			}()
		}
		wg.Wait()
	})
	// A user's own link to a shard kept elsewhere (another disk) is read
	// through; the index still cannot name a path outside the directory.
	t.Run("symlink outside", func(t *testing.T) {
		dir := setup(t)
		outside := filepath.Join(t.TempDir(), "elsewhere.safetensors")
		os.Rename(filepath.Join(dir, s2), outside)
		if err := os.Symlink(outside, filepath.Join(dir, s2)); err != nil {
			t.Skip(err)
		}
		c, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if valueOf(t, c, "model.layers.t.weight") != 2 {
			t.Error("wrong value through the link")
		}
	})
	t.Run("dangling symlink", func(t *testing.T) {
		dir := setup(t)
		os.Remove(filepath.Join(dir, s2))
		if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, s2)); err != nil {
			t.Skip(err)
		}
		_, err := hf.Open(dir)
		mustContain(t, err, s2, "dangling")
	})
	t.Run("symlink inside", func(t *testing.T) {
		dir := setup(t)
		os.Rename(filepath.Join(dir, s2), filepath.Join(dir, "real2.bin"))
		if err := os.Symlink("real2.bin", filepath.Join(dir, s2)); err != nil {
			t.Skip(err)
		}
		c, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if valueOf(t, c, "model.layers.t.weight") != 2 {
			t.Error("wrong value through symlink")
		}
	})
}

// TestHubCacheLayout: a Hugging Face hub snapshot links its files to
// ../../blobs; that is allowed.
func TestHubCacheLayout(t *testing.T) {
	repo := t.TempDir()
	snap := filepath.Join(repo, "snapshots", "0123abc")
	blob := filepath.Join(repo, "blobs", "deadbeef")
	writeFile(t, filepath.Join(snap, "config.json"), []byte(tinyConfig))
	os.MkdirAll(filepath.Dir(blob), 0o755)
	writeShard(t, blob, 5, "w")
	if err := os.Symlink("../../blobs/deadbeef", filepath.Join(snap, "model.safetensors")); err != nil {
		t.Skip(err)
	}
	c, err := hf.Open(snap)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
