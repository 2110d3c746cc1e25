package inspect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
)

// ArrayPreview is how many leading items of an array KV are shown.
const ArrayPreview = 8

// maxTextString is the longest scalar string printed whole in text mode
// (chat templates can be kilobytes); --json always prints it whole.
const maxTextString = 160

// InspectOptions are the parsed arguments of inspect.
type InspectOptions struct {
	// Path is the GGUF file to inspect.
	Path string
	// JSON selects one JSON object instead of text.
	JSON bool
	// Full prints whole arrays and strings (gguf-dump's --json-array; the
	// chat template uncut) instead of previews.
	Full bool
	// Keys, when set, print only these metadata keys, whole: in text one
	// value per line (arrays one item per line, strings raw, so
	// `--key tokenizer.chat_template > t.jinja` gives the template), in JSON
	// one object key → value. A missing key is an error.
	Keys []string
	// Out receives the report (the command's stdout).
	Out io.Writer
}

// NewCmdInspect returns the inspect command. It only parses flags; runF
// replaces the real run in tests (nil: inspectRun).
func NewCmdInspect(runF func(*InspectOptions) error) *cobra.Command {
	opts := &InspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Print the metadata and tensor table of a GGUF file (types, shapes, offsets, I2_S/TL scales)",
		Long: `Print a GGUF file's version, alignment, data offset, every metadata key (arrays shortened to
their count and first 8 items) and every tensor: name, type by name and ggml id (I2_S(36), TL1(38),
TL2(39)), ne in GGUF order, offset within the data section, size in bytes, and for I2_S/TL1/TL2
the per-tensor float32 scale. --json prints the same as one JSON object. --full prints whole arrays
and strings (gguf-dump's --json-array; --json-array is --json --full); --key K prints only key K,
whole (repeat or comma-separate for several).`,
		Example: `  bitnet-convert inspect model.gguf
  bitnet-convert inspect model.gguf --key tokenizer.chat_template > template.jinja
  bitnet-convert inspect model.gguf --key general.name,bitnet.block_count --json
  bitnet-convert inspect model.gguf --json-array > dump.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usage.Errorf("inspect takes exactly one argument, the GGUF file (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			opts.Out = cmd.OutOrStdout()
			if runF != nil {
				return runF(opts)
			}
			return inspectRun(opts)
		},
	}
	var jsonArray bool
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object instead of text")
	cmd.Flags().BoolVar(&opts.Full, "full", false, "print whole arrays and strings instead of previews")
	cmd.Flags().BoolVar(&jsonArray, "json-array", false, "--json with whole arrays (as gguf-dump --json --json-array)")
	cmd.Flags().StringSliceVar(&opts.Keys, "key", nil, "print only this metadata key, whole (repeatable, or comma-separated)")
	cmd.PreRun = func(*cobra.Command, []string) {
		if jsonArray {
			opts.JSON, opts.Full = true, true
		}
	}
	return cmd
}

// report is what inspect prints; the JSON form is its encoding.
type report struct {
	Path       string         `json:"path"`
	Version    uint32         `json:"version"`
	Alignment  uint64         `json:"alignment"`
	DataOffset uint64         `json:"data_offset"`
	KVs        []kvReport     `json:"kvs"`
	Tensors    []tensorReport `json:"tensors"`
}

type kvReport struct {
	Key  string `json:"key"`
	Type string `json:"type"`
	// Value is set for scalars.
	Value any `json:"value,omitempty"`
	// Elem, Count and First are set for arrays.
	Elem  string `json:"elem_type,omitempty"`
	Count *int   `json:"count,omitempty"`
	First []any  `json:"first,omitempty"`
	// Items holds every element with --full (First is then empty).
	Items []any `json:"items,omitempty"`
	// Note names an ambiguous value (general.file_type 40, see
	// gguf.FileTypeName).
	Note string `json:"note,omitempty"`
}

type tensorReport struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	TypeID uint32   `json:"type_id"`
	Ne     []uint64 `json:"ne"`
	Offset uint64   `json:"offset"`
	Bytes  uint64   `json:"bytes"`
	// Scale is the per-tensor float32 of I2_S/TL1/TL2 tensors: a JSON
	// number, or null with ScaleNote ("NaN", "+Inf", "-Inf") when it is not
	// finite (JSON has no such numbers; one type per field, defect D23).
	Scale     json.RawMessage `json:"scale,omitempty"`
	ScaleNote string          `json:"scale_note,omitempty"`
	// ScaleRange summarises the per-row (IQ*_BN) or per-block (TQ*_0)
	// scales: "min..max (N scales)".
	ScaleRange string `json:"scale_range,omitempty"`
	// Layout names the layout of an id the 2026 type-id map decides from
	// the data (gguf.LayoutName), or says why it could not
	// (reader.File.Layouts: "type 42: layout ambiguous (…)").
	Layout string `json:"layout,omitempty"`
	// Code3 counts the elements of a Q2_0, I2_S (any layout) or TQ2_0
	// tensor holding the 2-bit code 3, which is not ternary (for I2_S and
	// TQ2_0 only when there are some).
	Code3 *int     `json:"code3,omitempty"`
	scale *float32 // for the text report
}

// inspectRun opens opts.Path and prints the report to opts.Out.
func inspectRun(opts *InspectOptions) error {
	if err := fsutil.CheckRegular(opts.Path); err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	f, err := reader.Open(opts.Path)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	defer f.Close()
	if len(opts.Keys) > 0 {
		return printKeys(opts, f)
	}
	r, err := buildReport(opts.Path, f, opts.Full)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", opts.Path, err)
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return writeText(opts.Out, r, opts.Full)
}

// printKeys prints the values of opts.Keys whole (see InspectOptions.Keys).
func printKeys(opts *InspectOptions, f *reader.File) error {
	vals := make([]gguf.Value, len(opts.Keys))
	for i, k := range opts.Keys {
		v, ok := f.Get(k)
		if !ok {
			return fmt.Errorf("inspect %s: no metadata key %q (inspect without --key lists them)", opts.Path, k)
		}
		vals[i] = v
	}
	if opts.JSON {
		var buf bytes.Buffer
		buf.WriteString("{")
		for i, k := range opts.Keys {
			var x any
			if vals[i].Type == gguf.ValueArray {
				x = arrayItems(vals[i])
			} else {
				x = jsonable(vals[i].V)
			}
			kb, _ := json.Marshal(k)
			vb, err := marshalNoEscape(x)
			if err != nil {
				return err
			}
			if i > 0 {
				buf.WriteString(",")
			}
			fmt.Fprintf(&buf, "\n  %s: %s", kb, vb)
		}
		buf.WriteString("\n}\n")
		_, err := opts.Out.Write(buf.Bytes())
		return err
	}
	w := bufio.NewWriter(opts.Out)
	for i := range opts.Keys {
		if vals[i].Type == gguf.ValueArray {
			for _, x := range arrayItems(vals[i]) {
				fmt.Fprintln(w, rawValue(x))
			}
			continue
		}
		fmt.Fprintln(w, rawValue(vals[i].V))
	}
	return w.Flush()
}

// rawValue formats a value for --key text output: strings as they are,
// numbers as textValue does.
func rawValue(x any) string {
	if s, ok := x.(string); ok {
		return s
	}
	return textValue(x, true)
}

func marshalNoEscape(x any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func buildReport(path string, f *reader.File, full bool) (*report, error) {
	r := &report{Path: path, Version: f.Version, Alignment: f.Alignment, DataOffset: f.DataOffset,
		KVs: make([]kvReport, 0, len(f.KVs)), Tensors: make([]tensorReport, 0, len(f.Tensors))}
	types := map[gguf.Type]bool{}
	for _, ti := range f.Tensors {
		types[ti.Type] = true
	}
	for _, kv := range f.KVs {
		k := kvReport{Key: kv.Key, Type: kv.Value.Type.String()}
		if kv.Value.Type == gguf.ValueArray {
			items := arrayItems(kv.Value)
			n := len(items)
			k.Elem, k.Count = kv.Value.Elem.String(), &n
			if full {
				k.Items = items
			} else {
				k.First = items[:min(n, ArrayPreview)]
			}
		} else {
			k.Value = jsonable(kv.Value.V)
		}
		if ft, ok := kv.Value.Uint(); ok && kv.Key == "general.file_type" {
			k.Note = gguf.FileTypeName(ft, func(t gguf.Type) bool { return types[t] })
		}
		r.KVs = append(r.KVs, k)
	}
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		if err != nil {
			return nil, err
		}
		t := tensorReport{Name: ti.Name, Type: ti.Type.String(), TypeID: ti.Type.ID(), Ne: ti.Ne, Offset: ti.Offset, Bytes: uint64(len(data))}
		switch scales := ternaryScales(ti, data); {
		case len(scales) == 1:
			sc := scales[0]
			t.scale = &sc
			if f := float64(sc); math.IsNaN(f) || math.IsInf(f, 0) {
				t.Scale, t.ScaleNote = json.RawMessage("null"), strconv.FormatFloat(f, 'g', -1, 32)
			} else {
				t.Scale = json.RawMessage(strconv.FormatFloat(f, 'g', -1, 32))
			}
		case len(scales) > 1:
			lo, hi := scales[0], scales[0]
			for _, v := range scales {
				lo, hi = min(lo, v), max(hi, v)
			}
			t.ScaleRange = fmt.Sprintf("%g..%g (%d scales)", lo, hi, len(scales))
		}
		t.Layout = gguf.LayoutName(ti.Type)
		if note, ok := f.Layouts[ti.Name]; ok {
			t.Layout = note
		}
		if c, ok := format.ForType(ti.Type, format.LayoutX86, nil); ok && len(ti.Ne) == 2 {
			if cc, ok := c.(format.NonTernaryCounter); ok {
				if n, err := cc.Code3(data, int(ti.Ne[0]), int(ti.Ne[1])); err == nil && (n > 0 || !onlyNonZeroCode3(c)) {
					t.Code3 = &n
				}
			}
		}
		r.Tensors = append(r.Tensors, t)
	}
	return r, nil
}

// arrayItems returns the elements of an array value as []any.
func arrayItems(v gguf.Value) []any {
	var out []any
	switch s := v.V.(type) {
	case []string:
		out = make([]any, len(s))
		for i, x := range s {
			out[i] = x
		}
	case []float32:
		out = make([]any, len(s))
		for i, x := range s {
			out[i] = jsonable(x)
		}
	case []float64:
		out = make([]any, len(s))
		for i, x := range s {
			out[i] = jsonable(x)
		}
	default:
		out = genericItems(v.V)
	}
	return out
}

func genericItems(x any) []any {
	switch s := x.(type) {
	case []uint8:
		return each(s)
	case []int8:
		return each(s)
	case []uint16:
		return each(s)
	case []int16:
		return each(s)
	case []uint32:
		return each(s)
	case []int32:
		return each(s)
	case []uint64:
		return each(s)
	case []int64:
		return each(s)
	case []bool:
		return each(s)
	}
	return nil
}

func each[T any](s []T) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// jsonable replaces non-finite floats (which encoding/json refuses) by
// their names.
func jsonable(x any) any {
	var f float64
	switch v := x.(type) {
	case float32:
		f = float64(v)
	case float64:
		f = v
	default:
		return x
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return x
}

// textValue formats one scalar or array item for the text report: strings
// quoted (Go syntax, so empty and odd tokens stay visible), floats in the
// shortest form that round-trips their width.
func textValue(x any, full bool) string {
	switch v := x.(type) {
	case string:
		if len(v) > maxTextString && !full {
			return strconv.Quote(v[:maxTextString]) + fmt.Sprintf("… (%d bytes)", len(v))
		}
		return strconv.Quote(v)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(x)
}

// safeName returns a key or tensor name as it is when it is printable
// UTF-8 without spaces, else quoted in Go syntax (\x1b, \x00, \xff), as
// values are: a name with ESC bytes must not drive the terminal (defect
// H16).
func safeName(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

func neString(ne []uint64) string {
	parts := make([]string, len(ne))
	for i, d := range ne {
		parts[i] = strconv.FormatUint(d, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func writeText(out io.Writer, r *report, full bool) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "file:\t%s\n", r.Path)
	fmt.Fprintf(tw, "version:\t%d\n", r.Version)
	fmt.Fprintf(tw, "alignment:\t%d\n", r.Alignment)
	fmt.Fprintf(tw, "data offset:\t%d\n", r.DataOffset)
	tw.Flush()
	fmt.Fprintf(&buf, "\nmetadata (%d keys):\n", len(r.KVs))
	tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	for _, k := range r.KVs {
		if k.Count != nil {
			shown := k.First
			if full {
				shown = k.Items
			}
			items := make([]string, len(shown))
			for i, x := range shown {
				items[i] = textValue(x, full)
			}
			more := ""
			if *k.Count > len(shown) {
				more = " …"
			}
			fmt.Fprintf(tw, "  %s\t[%s]\t%d items: %s%s\n", safeName(k.Key), k.Elem, *k.Count, strings.Join(items, " "), more)
			continue
		}
		note := ""
		if k.Note != "" {
			note = " (" + k.Note + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s%s\n", safeName(k.Key), k.Type, textValue(k.Value, full), note)
	}
	tw.Flush()
	fmt.Fprintf(&buf, "\ntensors (%d):\n", len(r.Tensors))
	tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  name\ttype\tne\toffset\tbytes\tscale\n")
	for _, t := range r.Tensors {
		scale := ""
		if t.scale != nil {
			scale = textValue(*t.scale, false)
		} else if t.ScaleRange != "" {
			scale = t.ScaleRange
		}
		if t.Code3 != nil {
			scale += fmt.Sprintf("; code 3 (+2·d, not ternary): %d", *t.Code3)
		}
		if t.Layout != "" {
			scale = strings.TrimPrefix(scale+"; "+t.Layout, "; ")
		}
		typ := fmt.Sprintf("%s(%d)", t.Type, t.TypeID)
		if strings.HasPrefix(t.Type, "id ") {
			typ = t.Type // "id 41 (layout unknown)" names its id already
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%s\n", safeName(t.Name), typ, neString(t.Ne), t.Offset, t.Bytes, scale)
	}
	tw.Flush()
	// Drop the padding tabwriter leaves after the last non-empty cell.
	lines := strings.SplitAfter(buf.String(), "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, "\n") {
			lines[i] = strings.TrimRight(l[:len(l)-1], " ") + "\n"
		}
	}
	_, err := io.WriteString(out, strings.Join(lines, ""))
	return err
}

// ternaryScales reads the scales of a ternary tensor through the format
// layer (per tensor for I2_S/TL1/TL2, per row for IQ*_BN, per 256-block for
// TQ*_0); nil for other types or a tensor the layout cannot hold.
func ternaryScales(ti gguf.TensorInfo, data []byte) []float32 {
	f, ok := format.ForType(ti.Type, format.LayoutX86, nil)
	if !ok || len(ti.Ne) != 2 {
		return nil
	}
	sc, err := f.Scales(data, int(ti.Ne[0]), int(ti.Ne[1]))
	if err != nil {
		return nil
	}
	return sc
}

// onlyNonZeroCode3 reports whether the code 3 count of format c is reported
// only when non-zero (I2_S and TQ2_0, whose reports predate the count).
func onlyNonZeroCode3(c format.Format) bool {
	switch c.(type) {
	case format.I2S, format.TQ2_0:
		return true
	}
	return false
}
