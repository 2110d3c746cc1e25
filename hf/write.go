package hf

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
)

// WriteTensor is one tensor to write with WriteSafetensors. Its bytes are
// produced on demand, so a writer never holds every tensor in memory.
type WriteTensor struct {
	// Name is the tensor name (any string except "__metadata__").
	Name string
	// DType is any safetensors dtype (see DType.Size).
	DType DType
	// Shape is in HF order; [] (or nil) for a 0-d tensor of one element.
	Shape []uint64
	// Data writes exactly NElements × DType.Size() little-endian bytes.
	Data func(w io.Writer) error
}

// RawData returns a WriteTensor.Data function that writes b.
func RawData(b []byte) func(io.Writer) error {
	return func(w io.Writer) error { _, err := w.Write(b); return err }
}

// WriteSafetensors writes tensors, in the given order with data_offsets
// increasing and no gaps, to a safetensors file at path (replacing it
// atomically through internal/atomicfile: on any error no file is left
// behind). The JSON header lists the tensors in the given order, then
// "__metadata__" if metadata is non-empty, and is padded with spaces to a
// multiple of 8 bytes. It returns an error naming the tensor for a duplicate
// or empty name, an unknown dtype, a size that overflows, or a Data callback
// that fails or writes the wrong number of bytes.
func WriteSafetensors(path string, tensors []WriteTensor, metadata map[string]string) (err error) {
	header, sizes, err := safetensorsHeader(tensors, metadata)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := atomicfile.Create(path, true)
	if err != nil {
		return err
	}
	defer f.Abort()
	// Errors name path, not the temp file that is removed (defect D16).
	defer func() { err = f.NameTarget(err) }()
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := bw.Write(header); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	for i, t := range tensors {
		cw := &countingWriter{w: bw}
		if t.Data == nil {
			return fmt.Errorf("write %s: tensor %q has no Data function", path, t.Name)
		}
		if err := t.Data(cw); err != nil {
			return fmt.Errorf("write %s: tensor %q: %w", path, t.Name, err)
		}
		if cw.err != nil {
			return fmt.Errorf("write %s: tensor %q: %w", path, t.Name, cw.err)
		}
		if cw.n != sizes[i] {
			return fmt.Errorf("write %s: tensor %q: Data wrote %d bytes, want %d: %w", path, t.Name, cw.n, sizes[i], errShortWrite)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// safetensorsHeader builds the 8-byte length plus padded JSON header.
func safetensorsHeader(tensors []WriteTensor, metadata map[string]string) ([]byte, []uint64, error) {
	var sb strings.Builder
	sb.WriteByte('{')
	seen := map[string]bool{}
	sizes := make([]uint64, len(tensors))
	var off uint64
	for i, t := range tensors {
		if t.Name == "" || t.Name == "__metadata__" {
			return nil, nil, fmt.Errorf("tensor %d has the reserved or empty name %q", i, t.Name)
		}
		if seen[t.Name] {
			return nil, nil, fmt.Errorf("tensor %q is listed twice", t.Name)
		}
		seen[t.Name] = true
		es := t.DType.Size()
		if es == 0 {
			return nil, nil, fmt.Errorf("tensor %q has unknown dtype %q", t.Name, t.DType)
		}
		n := es
		for _, d := range t.Shape {
			hi, lo := bits.Mul64(n, d)
			if hi != 0 {
				return nil, nil, fmt.Errorf("tensor %q: shape %v overflows 64 bits", t.Name, t.Shape)
			}
			n = lo
		}
		end, carry := bits.Add64(off, n, 0)
		if carry != 0 {
			return nil, nil, fmt.Errorf("tensor %q: data offset overflows 64 bits", t.Name)
		}
		sizes[i] = n
		if i > 0 {
			sb.WriteByte(',')
		}
		name, _ := json.Marshal(t.Name)
		shape := t.Shape
		if shape == nil {
			shape = []uint64{}
		}
		shp, _ := json.Marshal(shape)
		fmt.Fprintf(&sb, `%s:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, name, string(t.DType), shp, off, end)
		off = end
	}
	if len(metadata) > 0 {
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(tensors) > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`"__metadata__":{`)
		for i, k := range keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			vb, _ := json.Marshal(metadata[k])
			sb.Write(kb)
			sb.WriteByte(':')
			sb.Write(vb)
		}
		sb.WriteByte('}')
	}
	sb.WriteByte('}')
	for sb.Len()%8 != 0 {
		sb.WriteByte(' ')
	}
	out := make([]byte, 8, 8+sb.Len())
	putU64(out, uint64(sb.Len()))
	out = append(out, sb.String()...)
	return out, sizes, nil
}

func putU64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

type countingWriter struct {
	w   io.Writer
	n   uint64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += uint64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}
