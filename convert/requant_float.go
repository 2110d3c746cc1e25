package convert

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// floatRows is how many elements a float conversion handles at a time.
const floatRows = 1 << 20

func (r *requanter) floatTensor(gw *writer.Writer, i int, t *RequantTensor) error {
	ti := t.In
	s, _, err := r.section(ti)
	if err != nil {
		return err
	}
	n, err := gguf.NElements(ti.Ne)
	if err != nil {
		return err
	}
	inTr, _ := ti.Type.Traits()
	outTr, _ := t.Type.Traits()
	// Whole rows per chunk keep every block inside a chunk.
	row := int(ti.Ne[0])
	chunk := max(row, floatRows/row*row)
	pr, pw := io.Pipe()
	// done gets the goroutine's own error (reading, decoding, encoding;
	// nil when only the pipe failed) once it has finished
	done := make(chan error, 1)
	go func() {
		var err, own error
		for lo := 0; lo < int(n) && own == nil && err == nil; lo += chunk {
			hi := min(int(n), lo+chunk)
			in := make([]byte, (hi-lo)/int(inTr.BlockSize)*int(inTr.TypeSize))
			if _, own = io.ReadFull(s, in); own != nil {
				break
			}
			r.f32 = grow(r.f32, hi-lo)
			if own = decodeFloats(r.f32, ti.Type, in); own != nil {
				break
			}
			out := make([]byte, (hi-lo)/int(outTr.BlockSize)*int(outTr.TypeSize))
			if own = encodeFloats(out, t.Type, r.f32); own != nil {
				break
			}
			_, err = pw.Write(out)
		}
		if own != nil {
			own = fmt.Errorf("tensor %s: %w%s", ti.Name, own, retypeHint(ti.Name))
			err = own
		}
		pw.CloseWithError(err)
		done <- own
	}()
	r.logf("%-32s %-6s → %s", ti.Name, ti.Type, t.Type)
	err = gw.WriteTensorFrom(i, pr)
	pr.CloseWithError(err) // unblocks the goroutine when the writer failed
	if own := <-done; own != nil {
		// without the writer's wrapping, which names the tensor again
		return own
	}
	return err
}

// retypeFlag is the flag that retypes tensor name (token_embd or output),
// or "" for other tensors.
func retypeFlag(name string) string {
	switch name {
	case "token_embd.weight":
		return "--token-embedding-type"
	case "output.weight":
		return "--output-tensor-type"
	}
	return ""
}

// retypeHint is how to keep the retyped tensor name in a wider type
// (" (--token-embedding-type f32 or bf16)"), or "" for other tensors.
func retypeHint(name string) string {
	if f := retypeFlag(name); f != "" {
		return " (" + f + " f32 or bf16)"
	}
	return ""
}

// decodeFloats widens data of type typ into dst (len = elements).
func decodeFloats(dst []float32, typ gguf.Type, data []byte) error {
	switch typ {
	case gguf.TypeF32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	case gguf.TypeF16:
		for i := range dst {
			dst[i] = quantize.F16ToF32(binary.LittleEndian.Uint16(data[2*i:]))
		}
	case gguf.TypeBF16:
		for i := range dst {
			dst[i] = quantize.BF16ToF32(binary.LittleEndian.Uint16(data[2*i:]))
		}
	case gguf.TypeQ8_0:
		quantize.DequantizeQ8_0(dst, data)
	case gguf.TypeQ6_K:
		quantize.DequantizeQ6K(dst, data)
	case gguf.TypeQ4_K:
		quantize.DequantizeQ4K(dst, data)
	default:
		return fmt.Errorf("cannot decode type %s", typ)
	}
	return nil
}

// encodeFloats encodes x in typ into dst (exactly its size). F16 fails on
// values beyond its range.
func encodeFloats(dst []byte, typ gguf.Type, x []float32) error {
	switch typ {
	case gguf.TypeF32:
		for i, v := range x {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case gguf.TypeF16:
		if m, bad := quantize.F16Overflow(x); bad {
			return fmt.Errorf("max |value| %g exceeds the F16 range (65504); keep this tensor F32 (or BF16) instead", m)
		}
		for i, v := range x {
			binary.LittleEndian.PutUint16(dst[2*i:], quantize.F32ToF16(v))
		}
	case gguf.TypeBF16:
		for i, v := range x {
			binary.LittleEndian.PutUint16(dst[2*i:], quantize.F32ToBF16(v))
		}
	case gguf.TypeQ8_0:
		quantize.QuantizeQ8_0(dst, x)
		return encodedScalesFinite(dst, typ, x)
	case gguf.TypeQ6_K:
		quantize.QuantizeQ6K(dst, x)
		return encodedScalesFinite(dst, typ, x)
	default:
		return fmt.Errorf("cannot encode type %s", typ)
	}
	return nil
}
