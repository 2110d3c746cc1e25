package hf2gguf

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// PlanTensor is one tensor of the --dry-run --json plan. Shapes: HFShape is
// HF [out, in] (after unpacking packed U8), Ne the GGUF order.
type PlanTensor struct {
	HF       string   `json:"hf"`
	GGUF     string   `json:"gguf"`
	HFShape  []uint64 `json:"hf_shape"`
	Ne       []uint64 `json:"ne"`
	DType    string   `json:"dtype"`
	Type     string   `json:"type"`
	Bytes    uint64   `json:"bytes"`
	Packed   bool     `json:"packed,omitempty"`
	Fallback string   `json:"fallback,omitempty"`
}

// TypeTotal is the count and bytes of one ggml type.
type TypeTotal struct {
	Type    string `json:"type"`
	Tensors int    `json:"tensors"`
	Bytes   uint64 `json:"bytes"`
}

// Report is the --json output of hf2gguf: the plan with --dry-run (Tensors
// listed, Seconds 0), the summary of the written file otherwise. OutputError
// is the reason the real run would fail (dry run only; the exit status is
// then 1).
type Report struct {
	DryRun      bool         `json:"dry_run"`
	Output      string       `json:"output"`
	OutputError string       `json:"output_error,omitempty"`
	Arch        string       `json:"arch"`
	OutType     string       `json:"outtype,omitempty"`
	VocabOnly   bool         `json:"vocab_only,omitempty"`
	VocabSize   int          `json:"vocab_size,omitempty"`
	KVs         int          `json:"kvs"`
	TensorCount int          `json:"tensor_count"`
	DataBytes   uint64       `json:"data_bytes"`
	ByType      []TypeTotal  `json:"by_type"`
	Tensors     []PlanTensor `json:"tensors,omitempty"`
	PeakMemory  uint64       `json:"peak_memory_estimate,omitempty"`
	WeightScale string       `json:"weight_scale_rule,omitempty"`
	Warnings    []string     `json:"warnings"`
	Seconds     float64      `json:"seconds,omitempty"`
}

func baseReport(p *convert.Plan, out string, vocabOnly bool) Report {
	r := Report{Output: out, Arch: p.Arch, VocabOnly: vocabOnly, KVs: len(p.KVs), TensorCount: len(p.Tensors),
		DataBytes: p.TotalBytes(), ByType: []TypeTotal{}, Warnings: append([]string{}, p.Warnings...), WeightScale: string(p.WeightScaleRule)}
	if vocabOnly {
		r.VocabSize = vocabTokens(p)
	} else {
		r.OutType = string(p.OutType)
	}
	for _, c := range p.Summary() {
		r.ByType = append(r.ByType, TypeTotal{Type: c.Type.String(), Tensors: c.Tensors, Bytes: c.Bytes})
	}
	return r
}

func planJSON(p *convert.Plan, out string, check error, vocabOnly bool) Report {
	r := baseReport(p, out, vocabOnly)
	r.DryRun = true
	if check != nil {
		r.OutputError = check.Error()
	}
	if !vocabOnly {
		r.PeakMemory = p.PeakMemoryEstimate()
	}
	for _, t := range p.Tensors {
		r.Tensors = append(r.Tensors, PlanTensor{HF: t.HFName, GGUF: t.GGUFName, HFShape: t.HFShape, Ne: t.Ne,
			DType: string(t.Source.DType), Type: t.Type.String(), Bytes: t.Bytes, Packed: t.Packed, Fallback: t.Fallback})
	}
	return r
}

func summaryJSON(p *convert.Plan, out string, took time.Duration, vocabOnly bool) Report {
	r := baseReport(p, out, vocabOnly)
	r.Seconds = took.Seconds()
	return r
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// vocabTokens is the length of tokenizer.ggml.tokens in the plan (0 when
// there is none).
func vocabTokens(p *convert.Plan) int {
	for _, kv := range p.KVs {
		if kv.Key == "tokenizer.ggml.tokens" {
			if ss, ok := kv.Value.V.([]string); ok {
				return len(ss)
			}
		}
	}
	return 0
}

// vocabSummary is "<model> vocabulary, N tokens" for a vocab-only plan.
func vocabSummary(p *convert.Plan) string {
	model := "?"
	for _, kv := range p.KVs {
		if kv.Key == "tokenizer.ggml.model" && kv.Value.Type == gguf.ValueString {
			model, _ = kv.Value.V.(string)
		}
	}
	return fmt.Sprintf("%s vocabulary, %d tokens", model, vocabTokens(p))
}

// ListArchs prints the architectures the converter registry handles, with
// the GGUF arch each writes and the accepted output types (a table, or JSON).
func ListArchs(w io.Writer, asJSON bool) error {
	archs := convert.Architectures()
	if asJSON {
		return printJSON(w, archs)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "HF ARCHITECTURE\tMODEL_TYPE\tGGUF ARCH\tOUTTYPES\tNOTE")
	for _, a := range archs {
		mt := a.ModelType
		if mt == "" {
			mt = "-"
		}
		outs := make([]string, len(a.OutTypes))
		for i, t := range a.OutTypes {
			outs[i] = string(t)
		}
		note := ""
		switch {
		case a.VocabOnly:
			note = "--vocab-only only (weights not convertible yet)"
			outs = []string{"-"}
		case a.Embedding:
			note = "sentence embedding (no output head)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.HF, mt, strings.Join(a.GGUF, ", "), strings.Join(outs, ","), note)
	}
	return tw.Flush()
}

func outTypeNames() []string {
	out := make([]string, len(convert.OutTypes))
	for i, t := range convert.OutTypes {
		out[i] = string(t)
	}
	return out
}
