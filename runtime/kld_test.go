package runtime

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// TestEncodeLogProbs: the row's two floats and codes follow
// llama-perplexity's log_softmax on a hand-made row: max 2, min clamped to
// max − 16, q = round((l − min)/scale).
func TestEncodeLogProbs(t *testing.T) {
	logits := []float32{2, 0, -30, 1}
	row := make([]uint16, KLRowWords(len(logits)))
	EncodeLogProbs(row, logits)
	scale := math.Float32frombits(uint32(row[0]) | uint32(row[1])<<16)
	minLog := math.Float32frombits(uint32(row[2]) | uint32(row[3])<<16)
	if scale != float32(16)/65535 {
		t.Fatalf("scale %v", scale)
	}
	var sum float64
	for _, v := range logits {
		sum += float64(float32(math.Exp(float64(v - 2))))
	}
	if want := float32(-16) - float32(math.Log(sum)); minLog != want {
		t.Fatalf("min_log_prob %v, want %v", minLog, want)
	}
	q := row[4:]
	if q[0] != 65535 || q[2] != 0 || q[1] != uint16(math.RoundToEven(float64((1/scale)*14))) || len(row) != 8 {
		t.Fatalf("codes %v", q)
	}
	// Decoded, each log-prob is within half a step of the true one.
	for i, v := range logits[:2] {
		got := float64(scale)*float64(q[i]) + float64(minLog)
		want := float64(v-2) - math.Log(sum)
		if math.Abs(got-want) > float64(scale) {
			t.Errorf("id %d: log p %v, want %v", i, got, want)
		}
	}
	// Equal logits: scale 0, codes 0.
	EncodeLogProbs(row, []float32{3, 3, 3, 3})
	if row[0] != 0 || row[1] != 0 || row[4] != 0 {
		t.Errorf("flat row %v", row)
	}
}

// TestKLDStatsSelf: a row scored against its own encoding has a KLD of
// only the 16-bit rounding, the same top token and Δp ≈ 0; a shifted
// distribution has a positive KLD.
func TestKLDStatsSelf(t *testing.T) {
	logits := []float32{1.5, -0.25, 3, 0.75, -2, 2.5}
	row := make([]uint16, KLRowWords(len(logits)))
	EncodeLogProbs(row, logits)
	var s KLDStats
	s.Add(logits, row, 3)
	if s.Count != 1 || s.SameTop != 1 || math.Abs(s.SumKLD) > 1e-5 || math.Abs(s.SumPDiff) > 1e-5 {
		t.Fatalf("self: %+v", s)
	}
	other := []float32{3, -0.25, 1.5, 0.75, -2, 2.5}
	s.Add(other, row, 3)
	if s.SameTop != 1 || s.KLD[1] < 0.1 {
		t.Fatalf("other: %+v", s)
	}
}

// TestReadKLBaseHeader: a header round-trips; a wrong magic, counts that
// are not positive and a size that disagrees are ErrKLBase.
func TestReadKLBaseHeader(t *testing.T) {
	b := &KLBase{NCtx: 8, NVocab: 5, NChunk: 2, Tokens: []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}
	var buf bytes.Buffer
	if err := WriteKLBaseHeader(&buf, b); err != nil {
		t.Fatal(err)
	}
	size := KLBaseSize(8, 5, 2)
	if size != 20+64+2*2*3*10 {
		t.Fatalf("size %d", size)
	}
	got, err := ReadKLBaseHeader(bytes.NewReader(buf.Bytes()), size)
	if err != nil || got.NCtx != 8 || got.NVocab != 5 || got.NChunk != 2 || got.Tokens[15] != 16 {
		t.Fatalf("%+v, %v", got, err)
	}
	for _, c := range []struct {
		name string
		mut  func([]byte) []byte
		size int64
	}{
		{"magic", func(h []byte) []byte { h[0] = 'x'; return h }, size},
		{"size", func(h []byte) []byte { return h }, size + 1},
		{"zero ctx", func(h []byte) []byte { h[8] = 0; return h }, size},
		{"short", func(h []byte) []byte { return h[:10] }, size},
	} {
		h := c.mut(append([]byte(nil), buf.Bytes()...))
		if _, err := ReadKLBaseHeader(bytes.NewReader(h), c.size); !errors.Is(err, ErrKLBase) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// FuzzReadKLBaseHeader: any bytes are a header or an ErrKLBase, never a
// panic or an allocation beyond the stated size.
func FuzzReadKLBaseHeader(f *testing.F) {
	var buf bytes.Buffer
	WriteKLBaseHeader(&buf, &KLBase{NCtx: 4, NVocab: 3, NChunk: 1, Tokens: []int32{1, 2, 3, 4}})
	f.Add(buf.Bytes(), int64(KLBaseSize(4, 3, 1)))
	f.Add([]byte("_logits_\xff\xff\xff\x7f\xff\xff\xff\x7f\xff\xff\xff\x7f"), int64(1<<40))
	f.Fuzz(func(t *testing.T, data []byte, size int64) {
		b, err := ReadKLBaseHeader(bytes.NewReader(data), size)
		if err != nil {
			if !errors.Is(err, ErrKLBase) {
				t.Fatalf("error %v does not wrap ErrKLBase", err)
			}
			return
		}
		if KLBaseSize(b.NCtx, b.NVocab, b.NChunk) != size || len(b.Tokens) != b.NCtx*b.NChunk {
			t.Fatalf("accepted %+v for size %d", b, size)
		}
	})
}
