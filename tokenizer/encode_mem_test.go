package tokenizer

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// bigText is about n bytes of mixed prose: ASCII words and punctuation,
// Latin-1 and CJK letters, digits, newlines and runs of spaces.
func bigText(n int) string {
	unit := "The quick brown fox jumps over the lazy dog, 1234 times.\nÜber café naïve — 日本語のテキスト;  two  spaces\tand tab. "
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

func benchEncodeLarge(b *testing.B, tok Tokenizer) {
	text := bigText(1 << 20)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tok.Encode(text, true, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode1MB measures time and memory per 1 MiB of text for the SPM
// (llama2 tokenizer.model) and byte-level BPE (llama3) encoders; run with
// -benchmem: B/op over 1 MiB is the allocation per input byte.
func BenchmarkEncode1MB(b *testing.B) {
	b.Run("spm-llama2", func(b *testing.B) { benchEncodeLarge(b, spmLoad(b, llama2Dir, 0)) })
	b.Run("bpe-llama3", func(b *testing.B) {
		v, _ := realVocab(b, "llama3")
		tok, err := New(v)
		if err != nil {
			b.Fatal(err)
		}
		benchEncodeLarge(b, tok)
	})
}

// chunkTexts are inputs for TestChunkedEncodeExact: every vector input plus
// texts dense in the places a cut is considered (spaces after ASCII, after
// non-ASCII, after whitespace, around malformed UTF-8 lead bytes and
// U+2581).
func chunkTexts(t *testing.T, vectors []string) []string {
	texts := append([]string{bigText(6000)}, vectors...)
	alphabet := []string{" ", " ", "  ", "a", "b", "I", "'s", "'", "re", ".", ",", "!", "1", "23", "\n", "\r\n", "\t", "é", "日本", "▁", "\xe0", "\xf0", "\x80", "\xc3", "the", " the", "ing", "—", "\u00a0"}
	r := uint64(42)
	for n := 0; n < 300; n++ {
		var sb strings.Builder
		for k := 0; k < 1+n%40; k++ {
			r = r*6364136223846793005 + 1442695040888963407
			sb.WriteString(alphabet[(r>>33)%uint64(len(alphabet))])
		}
		texts = append(texts, sb.String())
	}
	return texts
}

// TestChunkedEncodeExact: encoding in pieces (cut at every allowed place,
// chunk size 1) gives exactly the ids of encoding each fragment whole, for
// the SPM (llama2, gemma3) and byte-level BPE (llama3, qwen3) vocabularies,
// with and without special-token parsing.
func TestChunkedEncodeExact(t *testing.T) {
	type model struct {
		name    string
		tok     Tokenizer
		vectors []string
	}
	var models []model
	for _, c := range []struct{ name, vectors string }{{"gemma3", "gemma3"}, {"llama3", "ggml-vocab-llama-bpe.gguf"}, {"qwen3", "ggml-vocab-qwen2.gguf"}} {
		v, _ := realVocab(t, c.name)
		tok, err := New(v)
		if err != nil {
			t.Fatal(err)
		}
		var ins []string
		for _, vc := range readVectors(t, c.vectors) {
			ins = append(ins, vc.in)
		}
		models = append(models, model{c.name, tok, ins})
	}
	var spmIns []string
	for _, vc := range spmReadVectors(t, spmVectorInp, spmVectorOut) {
		spmIns = append(spmIns, vc.input)
	}
	models = append(models, model{"llama2", spmLoad(t, llama2Dir, 0), spmIns})

	oldS, oldB := spmChunkBytes, bpeChunkBytes
	defer func() { spmChunkBytes, bpeChunkBytes = oldS, oldB }()
	for _, m := range models {
		cuts := 0
		for _, text := range chunkTexts(t, m.vectors) {
			for _, parse := range []bool{false, true} {
				spmChunkBytes, bpeChunkBytes = math.MaxInt, math.MaxInt
				whole, err1 := m.tok.Encode(text, true, parse)
				spmChunkBytes, bpeChunkBytes = 1, 1
				pieces, err2 := m.tok.Encode(text, true, parse)
				if (err1 == nil) != (err2 == nil) || !slices.Equal(whole, pieces) {
					t.Errorf("%s %q (parseSpecial %v):\n whole  %v %v\n pieces %v %v", m.name, text, parse, whole, err1, pieces, err2)
				}
			}
			if sp, ok := m.tok.(*SPM); ok && sp.spmCut(text, 1) < len(text) || !ok && bpeCut(text, 1) < len(text) {
				cuts++
			}
		}
		if cuts < 100 {
			t.Errorf("%s: only %d texts have a place to cut; the test does not exercise chunking", m.name, cuts)
		}
	}
}

// TestEncodeMemory: encoding 1 MiB allocates at most 8 bytes per input
// byte beyond the ids themselves (before chunked encoding the SPM encoder
// allocated 45 and the BPE one 67 bytes per input byte, and a 50 MB input
// reached 1.6 GB RSS).
func TestEncodeMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes 2 MiB")
	}
	text := bigText(1 << 20)
	v, _ := realVocab(t, "llama3")
	bpe, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tok  Tokenizer
	}{{"spm-llama2", spmLoad(t, llama2Dir, 0)}, {"bpe-llama3", bpe}} {
		var ids []int32
		res := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ids, _ = tc.tok.Encode(text, true, false)
			}
		})
		perByte := float64(res.AllocedBytesPerOp()-int64(4*cap(ids))) / float64(len(text))
		t.Logf("%s: %d B/op for %d bytes (%d ids), %.2f B/byte beyond the ids", tc.name, res.AllocedBytesPerOp(), len(text), len(ids), perByte)
		if perByte > 8 {
			t.Errorf("%s: %.1f bytes allocated per input byte beyond the ids, want ≤ 8", tc.name, perByte)
		}
	}
}
