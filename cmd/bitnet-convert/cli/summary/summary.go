// Package summary prints the one summary shape of the commands that write a
// GGUF (hf2gguf, requant): the file, its arch and the runtime it is for, the
// output type, the tensor and KV counts and the time, then the tensors per
// type with human-readable sizes.
package summary

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// Count is the number and data bytes of the tensors of one type.
type Count struct {
	Type    gguf.Type
	Tensors int
	Bytes   uint64
}

// Counts groups (type, bytes) pairs by type, in type-name order.
func Counts(types []gguf.Type, bytes []uint64) []Count {
	m := map[gguf.Type]*Count{}
	for i, t := range types {
		c, ok := m[t]
		if !ok {
			c = &Count{Type: t}
			m[t] = c
		}
		c.Tensors++
		c.Bytes += bytes[i]
	}
	var out []Count
	for _, c := range m {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Count) int { return strings.Compare(a.Type.String(), b.Type.String()) })
	return out
}

// File describes a written (or planned) GGUF.
type File struct {
	Path    string
	Arch    string
	Runtime string // the runtime the file is for (format.Spec.Runtime)
	OutType string
	Tensors int
	KVs     int
	Counts  []Count
	Took    time.Duration
}

// Write prints
//
//	wrote PATH: arch A for RUNTIME, outtype T, N tensors, K KVs in 0.07s
//	tensors: F16 1 (256.0 KiB), I2_S 14 (288.4 KiB); data 555.4 KiB
//
// and returns the first write error.
func Write(w io.Writer, f File) error {
	if _, err := fmt.Fprintf(w, "wrote %s: arch %s for %s, outtype %s, %d tensors, %d KVs in %.2fs\n", f.Path, f.Arch, f.Runtime, f.OutType, f.Tensors, f.KVs, f.Took.Seconds()); err != nil {
		return err
	}
	return Totals(w, f.Counts)
}

// Totals prints the "tensors: TYPE n (size), …; data SIZE" line.
func Totals(w io.Writer, counts []Count) error {
	var parts []string
	var total uint64
	for _, c := range counts {
		parts = append(parts, fmt.Sprintf("%s %d (%s)", c.Type, c.Tensors, Human(c.Bytes)))
		total += c.Bytes
	}
	_, err := fmt.Fprintf(w, "tensors: %s; data %s\n", strings.Join(parts, ", "), Human(total))
	return err
}

// Human formats a byte count in binary units (B, KiB, MiB, GiB).
func Human(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Notices prints a plan's warnings, one line each, as
// "bitnet-convert: notice: MSG" so that a user (or a script) tells them from
// the one-line errors, which have no such word.
func Notices(w io.Writer, msgs []string) {
	for _, m := range msgs {
		fmt.Fprintf(w, "bitnet-convert: notice: %s\n", strings.TrimPrefix(m, "notice: "))
	}
}
