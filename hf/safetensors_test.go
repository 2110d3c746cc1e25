package hf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

func TestParseHeaderErrors(t *testing.T) {
	ok := `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	cases := []struct {
		name string
		file []byte
		want []string
	}{
		{"short file", []byte{1, 2, 3}, []string{"shorter than the 8-byte"}},
		{"header past end", func() []byte {
			b := rawSafetensors(ok, make([]byte, 8))
			binary.LittleEndian.PutUint64(b, 1<<40)
			return b
		}(), []string{"runs past the end"}},
		{"header length max uint64", func() []byte {
			b := rawSafetensors(ok, make([]byte, 8))
			binary.LittleEndian.PutUint64(b, ^uint64(0))
			return b
		}(), []string{"runs past the end"}},
		{"not json", rawSafetensors(`{"w":`, nil), []string{"header"}},
		{"array", rawSafetensors(`[1,2]`, nil), []string{"not a JSON object"}},
		{"unknown dtype", rawSafetensors(`{"w":{"dtype":"Q4","shape":[2],"data_offsets":[0,2]}}`, make([]byte, 2)), []string{`"w"`, "Q4"}},
		{"size mismatch", rawSafetensors(`{"w":{"dtype":"BF16","shape":[3],"data_offsets":[0,4]}}`, make([]byte, 4)), []string{`"w"`, "needs 6 bytes"}},
		{"beyond data", rawSafetensors(ok, make([]byte, 7)), []string{`"w"`, "beyond"}},
		{"reversed", rawSafetensors(`{"w":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}}`, make([]byte, 4)), []string{"reversed"}},
		{"overlap", rawSafetensors(`{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}`, make([]byte, 6)), []string{`"a"`, `"b"`, "overlap"}},
		{"duplicate key", rawSafetensors(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, make([]byte, 2)), []string{`"a"`, "twice"}},
		{"shape overflow", rawSafetensors(`{"w":{"dtype":"F32","shape":[4,1073741823,1073741825,2],"data_offsets":[0,0]}}`, nil), []string{`"w"`, "overflow"}},
		{"negative dim", rawSafetensors(`{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, nil), []string{`"w"`, "shape must be a list of non-negative integers (have number -1)"}},
		{"negative dim -256", rawSafetensors(`{"w":{"dtype":"F32","shape":[2,-256],"data_offsets":[0,0]}}`, nil), []string{`"w"`, "shape must be a list of non-negative integers (have number -256)"}},
		{"fractional dim", rawSafetensors(`{"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,0]}}`, nil), []string{`"w"`, "shape must be a list of non-negative integers (have number 1.5)"}},
		{"string dim", rawSafetensors(`{"w":{"dtype":"F32","shape":["2"],"data_offsets":[0,0]}}`, nil), []string{`"w"`, "shape must be a list of non-negative integers (have string)"}},
		{"negative offset", rawSafetensors(`{"w":{"dtype":"U8","shape":[1],"data_offsets":[-4,1]}}`, make([]byte, 4)), []string{`"w"`, "data_offsets must be a list of non-negative integers (have number -4)"}},
		{"huge offset", rawSafetensors(`{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,18446744073709551616]}}`, make([]byte, 4)), []string{`"w"`, "data_offsets must be a list of non-negative integers"}},
		{"missing offsets", rawSafetensors(`{"w":{"dtype":"F32","shape":[1]}}`, make([]byte, 4)), []string{`"w"`, "data_offsets"}},
		{"three offsets", rawSafetensors(`{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}`, make([]byte, 4)), []string{`"w"`, "3 entries"}},
		{"trailing garbage", rawSafetensors(ok+"xx", make([]byte, 8)), []string{"after the JSON object"}},
		{"bad metadata", rawSafetensors(`{"__metadata__":{"a":1}}`, nil), []string{"__metadata__"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := hf.ParseHeader(bytes.NewReader(tc.file), int64(len(tc.file)), "x.safetensors")
			mustContain(t, err, append([]string{"x.safetensors"}, tc.want...)...)
		})
	}
}

// TestHeaderSizeBound: a header length above MaxHeaderBytes is refused
// before the header is allocated, even when the file is big enough.
func TestHeaderSizeBound(t *testing.T) {
	var r bigReader
	r.size = hf.MaxHeaderBytes + 1000
	binary.LittleEndian.PutUint64(r.head[:], hf.MaxHeaderBytes+1)
	_, err := hf.ParseHeader(&r, r.size, "huge.safetensors")
	mustContain(t, err, "huge.safetensors", "limit")
	if r.maxRead > 8 {
		t.Errorf("read %d bytes before refusing", r.maxRead)
	}
}

// bigReader is a virtual file of size bytes with an 8-byte head.
type bigReader struct {
	head    [8]byte
	size    int64
	maxRead int
}

func (b *bigReader) ReadAt(p []byte, off int64) (int, error) {
	b.maxRead = max(b.maxRead, len(p))
	if off >= b.size {
		return 0, io.EOF
	}
	n := copy(p, b.head[min(off, 8):])
	return n, nil
}

func TestParseHeaderMetadataAndOrder(t *testing.T) {
	file := rawSafetensors(`{"z":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"__metadata__":{"format":"pt"},"a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}  `, []byte{9, 8, 7})
	h, err := hf.ParseHeader(bytes.NewReader(file), int64(len(file)), "m.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if h.Metadata["format"] != "pt" || len(h.Tensors) != 2 || h.Tensors[0].Name != "a" || h.Tensors[1].Name != "z" {
		t.Errorf("header %+v", h)
	}
	if h.Tensors[0].Offset != h.DataStart+1 || h.Tensors[0].File != "m.safetensors" {
		t.Errorf("a at %d (data start %d)", h.Tensors[0].Offset, h.DataStart)
	}
}

func TestWriteSafetensorsRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.safetensors")
	ts := []hf.WriteTensor{
		f32Tensor("b.weight", []uint64{2, 2}, 1, 2, 3, 4),
		{Name: "a.scale", DType: hf.BF16, Shape: nil, Data: hf.RawData([]byte{0x80, 0x3f})},
		{Name: `odd "name" <x>`, DType: hf.U8, Shape: []uint64{3}, Data: hf.RawData([]byte{1, 2, 3})},
	}
	if err := hf.WriteSafetensors(p, ts, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(p)
	n := binary.LittleEndian.Uint64(raw)
	if n%8 != 0 || raw[8] != '{' {
		t.Errorf("header length %d not padded to 8", n)
	}
	if len(raw) != int(8+n)+16+2+3 {
		t.Errorf("file is %d bytes", len(raw))
	}
	h, err := hf.ReadHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	if h.Metadata["format"] != "pt" || len(h.Tensors) != 3 {
		t.Fatalf("header %+v", h)
	}
	got := map[string]hf.TensorRef{}
	for _, r := range h.Tensors {
		got[r.Name] = r
	}
	if r := got["a.scale"]; len(r.Shape) != 0 || r.Size != 2 || raw[r.Offset] != 0x80 {
		t.Errorf("0-d tensor %+v", r)
	}
	if r := got[`odd "name" <x>`]; !reflect.DeepEqual(raw[r.Offset:r.Offset+3], []byte{1, 2, 3}) {
		t.Errorf("u8 tensor %+v", r)
	}
	if r := got["b.weight"]; r.Offset != 8+n || !reflect.DeepEqual(r.Shape, []uint64{2, 2}) {
		t.Errorf("first tensor %+v", r)
	}
}

func TestWriteSafetensorsAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.safetensors")
	boom := errors.New("boom")
	cases := []struct {
		name string
		ts   []hf.WriteTensor
		want string
	}{
		{"data error", []hf.WriteTensor{f32Tensor("ok", []uint64{1}, 1), {Name: "bad", DType: hf.F32, Shape: []uint64{1}, Data: func(io.Writer) error { return boom }}}, "boom"},
		{"short data", []hf.WriteTensor{{Name: "short", DType: hf.F32, Shape: []uint64{2}, Data: hf.RawData(make([]byte, 7))}}, "wrote 7 bytes, want 8"},
		{"duplicate", []hf.WriteTensor{f32Tensor("d", []uint64{1}, 1), f32Tensor("d", []uint64{1}, 1)}, `"d"`},
		{"unknown dtype", []hf.WriteTensor{{Name: "q", DType: "Q4", Data: hf.RawData(nil)}}, "Q4"},
		{"overflow", []hf.WriteTensor{{Name: "big", DType: hf.F32, Shape: []uint64{1 << 62, 8}, Data: hf.RawData(nil)}}, "overflow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := hf.WriteSafetensors(p, tc.ts, nil)
			mustContain(t, err, tc.want)
			entries, _ := os.ReadDir(dir)
			if len(entries) != 0 {
				t.Errorf("left files behind: %v", entries)
			}
		})
	}
}

func TestConfigGetters(t *testing.T) {
	c, err := hf.ParseConfig([]byte(`{
		"n_layer": 24, "num_hidden_layers": 30, "big": 9007199254740993, "float_int": 2048.0,
		"rms_norm_eps": 1e-05, "rope_theta": 500000, "hidden_act": "relu2", "tie": true,
		"head_dim": null, "frac": 1.5, "str_num": "12", "architectures": ["BitNetForCausalLM"],
		"quantization_config": {"linear_class": "autobitlinear", "quant_method": "bitnet"},
		"huge": 1e400
	}`), "cfg.json")
	if err != nil {
		t.Fatal(err)
	}
	intCases := []struct {
		keys  []string
		want  int64
		found bool
		err   string
	}{
		{[]string{"n_layers", "num_hidden_layers", "n_layer"}, 30, true, ""},
		{[]string{"n_layer", "num_hidden_layers"}, 24, true, ""},
		{[]string{"big"}, 9007199254740993, true, ""},
		{[]string{"float_int"}, 2048, true, ""},
		{[]string{"head_dim"}, 0, false, ""},
		{[]string{"head_dim", "n_layer"}, 24, true, ""},
		{[]string{"absent"}, 0, false, ""},
		{[]string{"frac"}, 0, true, `"frac"`},
		{[]string{"str_num"}, 0, true, `"str_num"`},
		{[]string{"tie"}, 0, true, `"tie"`},
	}
	for _, tc := range intCases {
		v, found, err := c.Int(tc.keys...)
		if int64(v) != tc.want || found != tc.found || (err == nil) != (tc.err == "") {
			t.Errorf("Int(%v) = %d, %v, %v; want %d, %v, err %q", tc.keys, v, found, err, tc.want, tc.found, tc.err)
		}
		if err != nil {
			mustContain(t, err, tc.err, "cfg.json")
		}
	}
	if v, ok, err := c.Float("rms_norm_eps"); v != 1e-5 || !ok || err != nil {
		t.Errorf("Float(rms_norm_eps) = %v %v %v", v, ok, err)
	}
	if v, ok, err := c.Float("rope_theta"); v != 500000 || !ok || err != nil {
		t.Errorf("Float(rope_theta) = %v %v %v", v, ok, err)
	}
	if _, _, err := c.Float("hidden_act"); err == nil {
		t.Error("Float of a string: no error")
	}
	if _, _, err := c.Float("huge"); err == nil {
		t.Error("Float of 1e400: no error")
	}
	if v, ok, err := c.String("hidden_act"); v != "relu2" || !ok || err != nil {
		t.Errorf("String = %v %v %v", v, ok, err)
	}
	if _, _, err := c.String("rope_theta"); err == nil {
		t.Error("String of a number: no error")
	}
	if v, ok, err := c.Bool("tie"); !v || !ok || err != nil {
		t.Errorf("Bool = %v %v %v", v, ok, err)
	}
	if _, _, err := c.Bool("hidden_act"); err == nil {
		t.Error("Bool of a string: no error")
	}
	if v, ok, err := c.Strings("architectures"); !ok || err != nil || !reflect.DeepEqual(v, []string{"BitNetForCausalLM"}) {
		t.Errorf("Strings = %v %v %v", v, ok, err)
	}
	if c.Has("head_dim") || !c.Has("tie") || c.Has("absent") {
		t.Error("Has: null must count as absent")
	}
	q, ok := c.Sub("quantization_config")
	if !ok {
		t.Fatal("no quantization_config")
	}
	if v, _, _ := q.String("linear_class"); v != "autobitlinear" {
		t.Errorf("linear_class %q", v)
	}
	if _, ok := c.Sub("hidden_act"); ok {
		t.Error("Sub of a string succeeded")
	}
	for _, bad := range []string{``, `[]`, `{"a":1} {"b":2}`, `{"a":}`, `null`} {
		if _, err := hf.ParseConfig([]byte(bad), "bad.json"); err == nil || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("ParseConfig(%q): %v", bad, err)
		}
	}
}

func TestReadConfigGolden(t *testing.T) {
	c, err := hf.ReadConfig("../testdata/configs/microsoft_bitnet-b1.58-2B-4T.config.json")
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := c.Int("hidden_size", "n_embd"); v != 2560 {
		t.Errorf("hidden_size %d", v)
	}
	if c.Has("head_dim") {
		t.Error("2B-4T has no head_dim")
	}
	if _, err := hf.ReadConfig("../testdata/configs/nope.json"); err == nil || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("missing config: %v", err)
	}
}

func FuzzSafetensorsHeader(f *testing.F) {
	f.Add(rawSafetensors(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(rawSafetensors(`{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[],"data_offsets":[0,2]}}`, make([]byte, 2)))
	f.Add(rawSafetensors(`{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}`, make([]byte, 6)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '{', '}'})
	if b, err := os.ReadFile(filepath.Join(goldenDir, "model.safetensors")); err == nil {
		f.Add(b[:8+2576])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := hf.ParseHeader(bytes.NewReader(data), int64(len(data)), "fuzz.safetensors")
		if err != nil {
			return
		}
		for _, r := range h.Tensors {
			if r.Offset < h.DataStart || r.Offset+r.Size > uint64(len(data)) || r.Offset+r.Size < r.Offset {
				t.Fatalf("accepted tensor %q outside the file: %+v", r.Name, r)
			}
			if r.NElements()*r.DType.Size() != r.Size {
				t.Fatalf("size mismatch accepted: %+v", r)
			}
			_ = data[r.Offset : r.Offset+r.Size]
		}
	})
}

func FuzzConfig(f *testing.F) {
	f.Add([]byte(`{"hidden_size": 256, "head_dim": null, "rms_norm_eps": 1e-5}`))
	f.Add([]byte(`{"quantization_config": {"linear_class": "bitlinear"}, "architectures": ["x", 1]}`))
	f.Add([]byte(`{"a": 1e999, "b": -0, "c": 18446744073709551616}`))
	if b, err := os.ReadFile(filepath.Join(goldenDir, "config.json")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := hf.ParseConfig(data, "fuzz.json")
		if err != nil {
			return
		}
		for k := range c.Raw {
			c.Int(k)
			c.Float(k)
			c.String(k)
			c.Bool(k)
			c.Strings(k)
			c.Has(k)
			if s, ok := c.Sub(k); ok {
				for k2 := range s.Raw {
					s.Int(k2)
				}
			}
		}
	})
}
