package writer_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// BenchmarkWrite writes a 32000-token vocabulary and 64 I2_S tensors of
// 2048×2048 to io.Discard.
func BenchmarkWrite(b *testing.B) {
	toks := make([]string, 32000)
	scores := make([]float32, len(toks))
	for i := range toks {
		toks[i] = fmt.Sprintf("tok%d", i)
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("bitnet")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Strings(toks)},
		{Key: "tokenizer.ggml.scores", Value: gguf.Float32s(scores)},
	}
	tensors := make([]gguf.TensorInfo, 64)
	for i := range tensors {
		tensors[i] = gguf.TensorInfo{Name: fmt.Sprintf("blk.%d.attn_q.weight", i), Type: gguf.TypeI2S, Ne: []uint64{2048, 2048}}
	}
	data := make([]byte, 2048*2048/4+32)
	b.SetBytes(int64(len(data) * len(tensors)))
	b.ReportAllocs()
	for b.Loop() {
		w, err := writer.New(io.Discard, kvs, tensors, 0)
		if err != nil {
			b.Fatal(err)
		}
		for i := range tensors {
			if err := w.WriteTensor(i, data); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
