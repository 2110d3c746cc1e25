package convert

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/outname"
	"github.com/bitnet-convert/bitnet-convert/internal/version"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// PlannedTensor is one output tensor of a Plan.
type PlannedTensor struct {
	HFName   string
	GGUFName string
	Class    tensormap.Class
	Match    tensormap.Match
	Source   hf.TensorRef // the weight (for packed projections: the U8 tensor)
	// Scale is the packed checkpoint's weight_scale tensor (zero Name when
	// none).
	Scale   hf.TensorRef
	Packed  bool     // U8 codes + weight_scale (spec §2.4)
	HFShape []uint64 // [out, in] after unpacking
	Ne      []uint64 // GGUF order
	Type    gguf.Type
	Bytes   uint64
	// Fallback is set when the projection could not use the outtype's
	// ternary type and was planned as F16 (--allow-fallback).
	Fallback string
	// NotConverted marks a projection quantization_config.
	// modules_to_not_convert lists: transformers keeps it a full-precision
	// nn.Linear, so its float weights are written as they are (F16 in a
	// ternary file, the float outtype's type otherwise), never ternarized.
	NotConverted bool
	// Format encodes a ternary projection (nil for float tensors).
	Format format.Format
	// GroupScaled marks a projection of a dense group-scaled ternary
	// checkpoint (groupscaled.go): its codes and one scale per 128 inputs
	// are kept exactly.
	GroupScaled bool
	// scaleErr describes the first group scale of a GroupScaled projection
	// that f16 cannot hold ("" when all fit).
	scaleErr string
	// scaleNote says, for -v, how the tensor's scale was stored when the
	// format rounds it (f16 scales of the type table): ", scale S → f16 R".
	scaleNote string
}

// Plan is everything decided before any tensor data is read: the GGUF arch,
// the KVs and the tensors in file order. --dry-run prints it.
type Plan struct {
	Dir       string
	Arch      string
	OutType   OutType
	Converter Converter
	Geometry  Geometry
	KVs       []gguf.KV
	Tensors   []PlannedTensor
	// WeightScaleRule is the rule applied to packed checkpoints ("" when the
	// checkpoint is not packed) and WeightScaleWhy says where it came from.
	WeightScaleRule WeightScaleRule
	WeightScaleWhy  string
	Warnings        []string
	// Kernels is the TL1/TL2 configuration used (nil for other outtypes).
	Kernels []format.Kernel
	// Runtime is the program family the file is written for (the arch and
	// KV names follow it; format.Spec.Runtime).
	Runtime string

	config map[string]any // config.json, for the TL shape order
}

// TotalBytes is the size of all tensor data.
func (p *Plan) TotalBytes() uint64 {
	var n uint64
	for _, t := range p.Tensors {
		n += t.Bytes
	}
	return n
}

// skipSuffixes are HF tensors that are never written (spec §5.4); weight_scale
// tensors are consumed by their projection.
var skipSuffixes = []string{".weight_scale", ".attention.masked_bias", ".attention.bias", ".rotary_emb.inv_freq"}

// markNotConverted honours quantization_config.modules_to_not_convert:
// transformers' replace_with_bitnet_linear (integrations/bitnet.py) keeps
// those modules as full-precision nn.Linear, so a listed projection is
// written as float (NotConverted), not ternarized (defect H5: they were
// ternarized silently). An entry names a module by its dotted path or a
// suffix of it ("lm_head", "model.layers.0.mlp.down_proj", "down_proj");
// entries that name no projection (lm_head, which is never ternarized) are
// fine. A listed projection stored packed (U8 + weight_scale) contradicts
// the list and is refused, naming it.
func markNotConverted(cfg *hf.Config, p *Plan) error {
	qc, ok := cfg.Sub("quantization_config")
	if !ok {
		return nil
	}
	raw, has := qc.Raw["modules_to_not_convert"]
	list, isList := raw.([]any)
	if has && raw != nil && !isList {
		return fmt.Errorf("%s: quantization_config.modules_to_not_convert is %v, not a list of module names; write it as a JSON list (e.g. [\"lm_head\"])", cfg.Path, raw)
	}
	for _, e := range list {
		if s, ok := e.(string); !ok || s == "" {
			return fmt.Errorf("%s: quantization_config.modules_to_not_convert holds %v, not a module name; list only non-empty strings (e.g. \"lm_head\")", cfg.Path, e)
		}
	}
	var kept []string
	for i := range p.Tensors {
		pt := &p.Tensors[i]
		if pt.Class != tensormap.Projection {
			continue
		}
		module := strings.TrimSuffix(pt.HFName, ".weight")
		for _, e := range list {
			s := e.(string)
			if module == s || strings.HasSuffix(module, "."+s) || strings.HasPrefix(module, s+".") {
				if pt.Packed || pt.Scale.Name != "" {
					return fmt.Errorf("%s: quantization_config.modules_to_not_convert lists %s, which transformers keeps in full precision, but the checkpoint stores it packed with a weight_scale; fix the list in config.json", cfg.Path, module)
				}
				pt.NotConverted = true
				kept = append(kept, module)
				break
			}
		}
	}
	if len(kept) > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("quantization_config.modules_to_not_convert: kept in full precision (float, not ternary): %s", strings.Join(kept, ", ")))
	}
	return nil
}

// NewPlan decides the output of converting ckpt with opts. Errors: an
// unsupported architecture (listing the supported ones), a tensor that maps
// to no GGUF name (listing every unmapped name), shape disagreements with
// config.json, packed projections without a scale, row lengths that do not
// fit the packing (unless AllowFallback), a missing untied LM head.
func NewPlan(ckpt *hf.Checkpoint, opts Options) (*Plan, error) {
	if opts.OutType == "" {
		opts.OutType = OutI2S
	}
	if _, ok := typePolicy(opts.OutType); !ok {
		_, err := ParseOutType(string(opts.OutType))
		return nil, err
	}
	if err := CheckPre(opts.Pre, opts.OutType); err != nil {
		return nil, err
	}
	cfg := ckpt.Config
	conv, ternarized, err := converterForOpts(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := CheckOutType(cfg, opts.OutType); err != nil {
		return nil, err
	}
	geo, err := conv.Geometry(cfg)
	if err != nil {
		return nil, err
	}
	if geo.Layers > len(ckpt.Tensors) {
		return nil, fmt.Errorf("%s: num_hidden_layers is %d but the checkpoint has only %d tensors; fix config.json", cfg.Path, geo.Layers, len(ckpt.Tensors))
	}
	p := &Plan{Dir: ckpt.Dir, Arch: conv.Arch(), OutType: opts.OutType, Converter: conv, Geometry: geo, config: cfg.Raw}
	p.Warnings = append(p.Warnings, ckpt.Notices...)
	if opts.Ternarize && !ternarized {
		p.Warnings = append(p.Warnings, "--ternarize has no effect: this checkpoint's architecture or quantization_config already makes its projections ternary")
	}

	// Pass 1: weight_scale tensors (spec §2.4 pass 1).
	scales := map[string]hf.TensorRef{}
	for _, ref := range ckpt.Tensors {
		if base, ok := strings.CutSuffix(ref.Name, ".weight_scale"); ok {
			scales[base] = ref
		}
	}
	if len(scales) > 0 {
		rule, why, err := weightScaleRule(cfg, opts.WeightScale)
		if err != nil {
			return nil, err
		}
		p.WeightScaleRule, p.WeightScaleWhy = rule, why
	}

	var unmapped []string
	seen := map[string]string{}
	var lmHead, embed *hf.TensorRef
	for i := range ckpt.Tensors {
		ref := ckpt.Tensors[i]
		if hasAnySuffix(ref.Name, skipSuffixes) {
			continue
		}
		name := strings.TrimPrefix(ref.Name, conv.StripPrefix())
		m, ok := conv.Table().Lookup(name)
		if !ok {
			unmapped = append(unmapped, ref.Name)
			continue
		}
		if prev, dup := seen[m.GGUF]; dup {
			return nil, fmt.Errorf("tensors %q and %q both map to %s", prev, ref.Name, m.GGUF)
		}
		seen[m.GGUF] = ref.Name
		if m.Block >= geo.Layers {
			return nil, fmt.Errorf("tensor %q: layer %d but config.json has num_hidden_layers %d", ref.Name, m.Block, geo.Layers)
		}
		if m.Class == tensormap.Projection && strings.HasSuffix(ref.Name, ".bias") {
			// Not a wrong-shaped weight, and never ternary (defect H15).
			return nil, fmt.Errorf("tensor %s: projection biases are not supported (config.json attention_bias / mlp_bias); BitNet projections have none", ref.Name)
		}
		switch m.Class {
		case tensormap.Output:
			lmHead = &ckpt.Tensors[i]
			if conv.Embedding() {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: embedding models have no output head; not written", ref.Name))
				continue
			}
		case tensormap.Embedding:
			embed = &ckpt.Tensors[i]
		}
		pt := PlannedTensor{HFName: ref.Name, GGUFName: m.GGUF, Class: m.Class, Match: m, Source: ref, HFShape: append([]uint64(nil), ref.Shape...)}
		base := strings.TrimSuffix(ref.Name, ".weight")
		if sc, ok := scales[base]; ok {
			if m.Class != tensormap.Projection {
				return nil, fmt.Errorf("tensor %q has a weight_scale but is not a ternary projection", ref.Name)
			}
			delete(scales, base)
			pt.Scale = sc
			if ref.DType == "U8" {
				if len(ref.Shape) != 2 {
					return nil, fmt.Errorf("packed tensor %q: want 2 dimensions, got shape %v", ref.Name, ref.Shape)
				}
				pt.Packed = true
				pt.HFShape = []uint64{ref.Shape[0] * 4, ref.Shape[1]}
			}
			if n := elements(sc.Shape); n != 1 {
				return nil, fmt.Errorf("tensor %q: weight_scale has %d elements, want 1", sc.Name, n)
			}
		} else if ref.DType == "U8" && m.Class != tensormap.Projection {
			// Only projections are packed; a U8 norm, bias or embedding is a
			// dtype this converter cannot read as floats.
			return nil, fmt.Errorf("tensor %q (%s) has dtype U8, which only packed ternary projections use; store it as F32, F16 or BF16", ref.Name, m.GGUF)
		} else if ref.DType == "U8" {
			return nil, fmt.Errorf("tensor %q is packed U8 but %s.weight_scale is missing", ref.Name, base)
		}
		p.Tensors = append(p.Tensors, pt)
	}
	if len(unmapped) > 0 {
		return nil, fmt.Errorf("%d tensor(s) map to no GGUF name for %s: %s (not a supported %s checkpoint, or a renamed tensor: remove it or rename it to the Hugging Face name)", len(unmapped), p.Arch, strings.Join(unmapped, ", "), p.Arch)
	}
	for base, sc := range scales {
		return nil, fmt.Errorf("tensor %q has no weight %q to scale", sc.Name, base+".weight")
	}
	if err := markNotConverted(cfg, p); err != nil {
		return nil, err
	}
	if embed == nil {
		return nil, fmt.Errorf("%s: no token embedding tensor (model.embed_tokens.weight) in the checkpoint", ckpt.Dir)
	}
	if err := p.checkComplete(); err != nil {
		return nil, err
	}
	if c, ok := conv.(TensorSetChecker); ok {
		if err := c.CheckTensors(p); err != nil {
			return nil, err
		}
	}
	if !conv.Embedding() {
		if err := p.planHead(ckpt, cfg, embed, lmHead, opts); err != nil {
			return nil, err
		}
	}
	if err := p.checkShapes(); err != nil {
		return nil, err
	}
	if dc, ok := conv.(DenseCandidate); ok && dc.DenseRefusal() != nil && !opts.VocabOnly {
		if err := p.planGroupScaled(ckpt, dc.DenseRefusal(), ternarized); err != nil {
			return nil, err
		}
	}
	if err := p.assignTypes(opts); err != nil {
		return nil, err
	}
	if err := p.buildKVs(ckpt.Dir, ckpt.Config, opts); err != nil {
		return nil, err
	}
	p.retarget()
	if opts.VocabOnly {
		p.Tensors = nil
	}
	return p, nil
}

func hasAnySuffix(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

func elements(shape []uint64) uint64 {
	n := uint64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// weightScaleRule decides multiply or divide for packed checkpoints from the
// override or quantization_config.linear_class (spec §2.4 "Our rule").
func weightScaleRule(cfg *hf.Config, override WeightScaleRule) (WeightScaleRule, string, error) {
	if override != RuleAuto {
		return override, "--weight-scale " + string(override), nil
	}
	qc, ok := cfg.Sub("quantization_config")
	if !ok {
		return "", "", fmt.Errorf("%s: packed checkpoint (weight_scale tensors) without quantization_config: pass --weight-scale multiply (HF AutoBitLinear) or divide (HF BitLinear)", cfg.Path)
	}
	lc, ok, err := qc.String("linear_class")
	if err != nil {
		return "", "", err // names config.json and the key
	}
	switch {
	case !ok:
		return RuleDivide, "quantization_config has no linear_class (transformers default BitLinear)", nil
	case lc == "autobitlinear":
		return RuleMultiply, "quantization_config.linear_class autobitlinear", nil
	case lc == "bitlinear":
		return RuleDivide, "quantization_config.linear_class bitlinear", nil
	}
	return "", "", fmt.Errorf("%s: quantization_config.linear_class %q is unknown: pass --weight-scale multiply or divide", cfg.Path, lc)
}

// planHead applies the tie rules of BR-19: tied without lm_head → no output;
// untied without lm_head → error (or tie with AllowTieFallback); tied with an
// lm_head identical to the embedding → output omitted; tied with a different
// lm_head → warning, the lm_head is kept.
func (p *Plan) planHead(ckpt *hf.Checkpoint, cfg *hf.Config, embed, head *hf.TensorRef, opts Options) error {
	tie, tieSet, err := cfg.Bool("tie_word_embeddings")
	if err != nil {
		return err // names config.json and the key
	}
	switch {
	case head == nil && tieSet && !tie:
		if !opts.AllowTieFallback {
			return fmt.Errorf("%s: tie_word_embeddings is false but lm_head.weight is missing (pass --allow-tie-fallback to use token_embd as the output head)", ckpt.Dir)
		}
		p.Warnings = append(p.Warnings, "lm_head.weight is missing although tie_word_embeddings is false: using token_embd as the output head (--allow-tie-fallback)")
	case head != nil && tieSet && tie:
		same, err := sameTensor(ckpt, *embed, *head)
		if err != nil {
			return err
		}
		if same {
			p.dropTensor(head.Name)
			p.Warnings = append(p.Warnings, "lm_head.weight equals model.embed_tokens.weight (tied): output.weight not written")
		} else {
			p.Warnings = append(p.Warnings, "tie_word_embeddings is true but lm_head.weight differs from model.embed_tokens.weight: keeping lm_head.weight as output.weight")
		}
	}
	return nil
}

func (p *Plan) dropTensor(hfName string) {
	out := p.Tensors[:0]
	for _, t := range p.Tensors {
		if t.HFName != hfName {
			out = append(out, t)
		}
	}
	p.Tensors = out
}

func sameTensor(ckpt *hf.Checkpoint, a, b hf.TensorRef) (bool, error) {
	if a.DType != b.DType || fmt.Sprint(a.Shape) != fmt.Sprint(b.Shape) {
		return false, nil
	}
	da, err := ckpt.Read(a)
	if err != nil {
		return false, err
	}
	defer da.Release()
	db, err := ckpt.Read(b)
	if err != nil {
		return false, err
	}
	defer db.Release()
	return bytes.Equal(da.Raw, db.Raw), nil
}

// checkComplete fails when a tensor the architecture needs for the
// config's num_hidden_layers is missing (a truncated or mismatched
// checkpoint would otherwise give a GGUF no runtime can load), listing the
// missing names.
func (p *Plan) checkComplete() error {
	have := map[string]bool{}
	for _, t := range p.Tensors {
		have[t.GGUFName] = true
	}
	var missing []string
	for _, name := range p.Converter.Table().Expected(p.Geometry.Layers) {
		if !have[name] {
			if hfName, ok := p.Converter.Table().HFName(name); ok {
				name += " (HF " + p.Converter.StripPrefix() + hfName + ")"
			}
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	shown := missing
	if len(shown) > 8 {
		shown = shown[:8]
	}
	more := ""
	if len(missing) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(missing)-len(shown))
	}
	return fmt.Errorf("%s: %d tensor(s) the %s architecture needs for %d layers are missing: %s%s (is the checkpoint complete, and does num_hidden_layers match it?)",
		p.Dir, len(missing), p.Arch, p.Geometry.Layers, strings.Join(shown, ", "), more)
}

// checkShapes compares every tensor with the shape its name rule declares
// (tensormap.Rule.Shape, BR-15: q rows = heads·head_dim, k/v rows =
// kv_heads·head_dim) in the config's geometry.
func (p *Plan) checkShapes() error {
	g := p.Geometry
	// Projections first: their rows and columns name heads × head_dim
	// (BR-15), which explains a norm mismatch too.
	rank := func(t PlannedTensor) int {
		switch {
		case strings.HasSuffix(t.GGUFName, ".attn_q.weight"):
			return 0
		case t.Class == tensormap.Projection:
			return 1
		}
		return 2
	}
	ordered := slices.Clone(p.Tensors)
	sort.SliceStable(ordered, func(a, b int) bool { return rank(ordered[a]) < rank(ordered[b]) })
	for _, t := range ordered {
		shape := t.Match.Rule.Shape
		w := shape.Sizes(g)
		if len(w) == 0 || slices.Contains(w, 0) {
			continue
		}
		if got := t.HFShape; !slices.Equal(got, w) {
			return fmt.Errorf("tensor %q has shape %v but config.json implies %v%s", t.HFName, got, w, shape.Why(g))
		}
	}
	return nil
}

// assignTypes applies the type policy, the row-length rules of the packed
// types (each format's Check), the --token-embedding-type and
// --output-tensor-type overrides, and computes ne and bytes.
func (p *Plan) assignTypes(opts Options) error {
	policy, _ := typePolicy(p.OutType)
	var ternary format.Format
	if spec, ok := format.Lookup(string(p.OutType)); ok {
		var kernels []format.Kernel
		if p.OutType == OutTL1 || p.OutType == OutTL2 {
			ks, err := tlKernels(p, opts)
			if err != nil {
				return err
			}
			kernels = ks
			p.Kernels = ks
		}
		ternary = spec.New(opts.I2SLayout, kernels)
	}
	override := map[tensormap.Class]gguf.Type{}
	for _, o := range []struct {
		class tensormap.Class
		flag  string
		val   string
	}{{tensormap.Embedding, "--token-embedding-type", opts.TokenEmbeddingType}, {tensormap.Output, "--output-tensor-type", opts.OutputTensorType}} {
		if o.val == "" {
			continue
		}
		typ, err := ParseFloatType(o.val)
		if err != nil {
			return fmt.Errorf("%s: %w", o.flag, err)
		}
		override[o.class] = typ
	}
	var fallbacks, relossed []string
	for i := range p.Tensors {
		t := &p.Tensors[i]
		t.Type = policy[t.Class]
		if typ, ok := override[t.Class]; ok {
			t.Type = typ
		}
		if len(t.HFShape) <= 1 {
			t.Type = gguf.TypeF32
		}
		if t.NotConverted {
			if p.OutType == OutTL1 || p.OutType == OutTL2 {
				return fmt.Errorf("tensor %s (%s) stays float (quantization_config.modules_to_not_convert) and %s files hold only ternary projections; use i2_s or another outtype", t.GGUFName, t.HFName, p.OutType)
			}
			t.Type = policy[tensormap.Embedding]
		}
		reason := ""
		if t.Class == tensormap.Projection && ternary != nil && len(t.HFShape) == 2 && !t.NotConverted {
			m, k := t.HFShape[0], t.HFShape[1]
			if err := groupScaledType(t, ternary, int(k), opts, &relossed); err != nil {
				return err
			}
			if err := format.CheckWrite(ternary, int(k), int(m)); err != nil {
				reason = err.Error()
			} else {
				t.Format = ternary
			}
		} else if tr, ok := t.Type.Traits(); ok && len(t.HFShape) == 2 && t.HFShape[1]%tr.BlockSize != 0 {
			reason = fmt.Sprintf("row length %d is not a multiple of %d (the %s block)", t.HFShape[1], tr.BlockSize, t.Type)
		}
		if reason != "" {
			if !opts.AllowFallback {
				return fmt.Errorf("tensor %s (%s): %s; pass --allow-fallback to write it as F16", t.GGUFName, t.HFName, reason)
			}
			t.Type = fallbackType
			t.Fallback = reason
			t.Format = nil
			fallbacks = append(fallbacks, t.GGUFName)
		}
		t.Ne = reverse(t.HFShape)
		if len(t.Ne) == 0 {
			t.Ne = []uint64{1}
		}
		n, err := gguf.NBytes(t.Type, t.Ne)
		if err != nil {
			return fmt.Errorf("tensor %s: %w", t.GGUFName, err)
		}
		t.Bytes = n
	}
	if opts.Ternarize && slices.ContainsFunc(p.Tensors, func(t PlannedTensor) bool { return t.GroupScaled && t.Format != nil }) {
		p.Warnings = append(p.Warnings, fmt.Sprintf("--ternarize has no effect: %s keeps the group-scaled projections exactly", p.OutType))
	}
	if len(relossed) > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("--ternarize: %d group-scaled projection(s) re-ternarized with one abs-mean scale per tensor for %s (lossy; --outtype q2_0 keeps them exactly)", len(relossed), p.OutType))
	}
	if len(fallbacks) > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("--allow-fallback: written as F16: %s", strings.Join(fallbacks, ", ")))
	}
	if opts.OutputTensorType != "" && !slices.ContainsFunc(p.Tensors, func(t PlannedTensor) bool { return t.Class == tensormap.Output }) {
		// Said, not silently ignored (defect H18).
		p.Warnings = append(p.Warnings, "--output-tensor-type has no effect: the model is tied (no output.weight is written; token_embd.weight is the head)")
	}
	return nil
}

func reverse(s []uint64) []uint64 {
	out := make([]uint64, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// buildKVs assembles general.*, the architecture's hyper-parameters, the
// tokenizer and the metadata overrides of the checkpoint in dir. A
// vocab-only plan gets no general.file_type and no
// general.quantization_version: it holds no tensors, so any file type would
// describe data that is not there.
func (p *Plan) buildKVs(dir string, cfg *hf.Config, opts Options) error {
	name := opts.ModelName
	if name == "" {
		name = DefaultModelName(dir)
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String(p.Arch)},
		{Key: "general.name", Value: gguf.String(name)},
	}
	hp, err := p.Converter.HParams(cfg)
	if err != nil {
		return err
	}
	// general.file_type goes after the llama hyper-parameters and before
	// vocab_size, as the reference writes it (order is free for readers).
	at := len(hp)
	for i, kv := range hp {
		if kv.Key == p.Arch+".vocab_size" {
			at = i
			break
		}
	}
	kvs = append(kvs, hp[:at]...)
	if !opts.VocabOnly {
		kvs = append(kvs, gguf.KV{Key: "general.file_type", Value: gguf.Uint32(uint32(fileType(p.OutType)))})
	}
	kvs = append(kvs, hp[at:]...)
	if ex, ok := p.Converter.(ExtraKVser); ok {
		ekvs, warns, err := ex.ExtraKVs(dir)
		if err != nil {
			return err
		}
		p.Warnings = append(p.Warnings, warns...)
		kvs = append(kvs, ekvs...)
	}
	if !opts.NoVocab {
		jf, ok := p.Converter.(TokenizerJSONPreferrer)
		jsonFirst := ok && jf.TokenizerJSONFirst()
		vkvs, warns, err := loadVocab(dir, p.Geometry.Vocab, opts, jsonFirst)
		if err != nil {
			return err
		}
		p.Warnings = append(p.Warnings, warns...)
		if fx, ok := p.Converter.(VocabFixer); ok {
			vkvs = fx.FixVocabKVs(vkvs)
		}
		kvs = append(kvs, vkvs...)
	}
	if quantizationVersion(p.OutType) && !opts.VocabOnly {
		kvs = append(kvs, gguf.KV{Key: "general.quantization_version", Value: gguf.Uint32(2)})
	}
	if len(p.Kernels) > 0 {
		kvs = append(kvs, gguf.KV{Key: format.KernelConfigKey, Value: gguf.String(string(format.KernelConfig(p.Kernels)))})
	}
	if p.OutType == OutI2S {
		kvs = append(kvs, gguf.KV{Key: format.LayoutKey, Value: gguf.String(string(layoutOrDefault(opts.I2SLayout)))})
	}
	// Which bitnet-convert wrote the file (no timestamp: reruns stay
	// byte-identical).
	kvs = append(kvs, gguf.KV{Key: version.Key, Value: gguf.String(version.Read().GGUFValue())})
	for _, o := range opts.Metadata {
		replaced := false
		for i := range kvs {
			if kvs[i].Key == o.Key {
				kvs[i].Value = o.Value
				replaced = true
			}
		}
		if !replaced {
			kvs = append(kvs, o)
		}
	}
	p.KVs = kvs
	return nil
}

// Summary counts tensors and bytes per type, sorted by type name.
func (p *Plan) Summary() []TypeCount {
	m := map[gguf.Type]*TypeCount{}
	for _, t := range p.Tensors {
		c, ok := m[t.Type]
		if !ok {
			c = &TypeCount{Type: t.Type}
			m[t.Type] = c
		}
		c.Tensors++
		c.Bytes += t.Bytes
	}
	var out []TypeCount
	for _, c := range m {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type.String() < out[j].Type.String() })
	return out
}

// TypeCount is one line of a Plan summary.
type TypeCount struct {
	Type    gguf.Type
	Tensors int
	Bytes   uint64
}

func joinOutTypes(ts []OutType) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// baseMemory is the resident memory of the converter besides the tensor being
// converted (Go runtime, buffered writer, streaming chunk buffers), measured
// on the golden model.
const baseMemory = 24 << 20

// PeakMemoryEstimate returns the expected peak resident memory in bytes of
// converting p: a projection holds its mapped input, its float32 copy (master
// weights), its codes and its output at once; every other tensor is streamed
// in chunks of streamElems. It is meant as an upper estimate: on the
// bitnet_b1_58-large shapes it says 76 MiB where /usr/bin/time measures
// 61 MiB.
func (p *Plan) PeakMemoryEstimate() uint64 {
	var peak uint64
	for _, t := range p.Tensors {
		if t.Class != tensormap.Projection {
			continue
		}
		n := elements(t.HFShape)
		need := t.Source.Size + n + t.Bytes // mapped input + codes + output
		if !t.Packed {
			need += 4 * n // the float32 copy
		}
		peak = max(peak, need)
	}
	return peak + baseMemory + streamElems*8
}

// DefaultModelName is general.name when --model-name is not given: the base
// name of the checkpoint directory (as bitnet.cpp's converter names it), or
// for a Hugging Face hub cache snapshot (models--ORG--NAME/snapshots/REV) the
// repository name NAME (outname.ModelName). The default output file name is
// derived from it (outname.Stem).
func DefaultModelName(dir string) string { return outname.ModelName(dir) }

// retarget renames the arch and its KVs for the runtime the outtype is
// written for (format.TargetArch: TQ files get arch "bitnet" for mainline
// llama.cpp) and adds the relu² notice when that runtime may run the FFN
// with SiLU.
func (p *Plan) retarget() {
	p.Runtime = format.RuntimeBitnetCpp
	if spec, ok := format.Lookup(string(p.OutType)); ok {
		p.Runtime = spec.Runtime
	}
	to := format.TargetArch(p.Arch, p.Runtime)
	if to == p.Arch {
		return
	}
	if format.ArchActivation[p.Arch] == "relu2" {
		p.Warnings = append(p.Warnings, format.Relu2Notice)
	}
	p.KVs = format.RenameArch(p.KVs, p.Arch, to)
	p.Arch = to
}

// layoutOrDefault is the I2_S layout written (x86 unless --i2s-layout).
func layoutOrDefault(l format.Layout) format.Layout {
	if l == "" {
		return format.LayoutX86
	}
	return l
}

// RuntimeLabel names, for the summary line, the runtime the written file is
// for (runtimeLabel of the plan's arch, runtime and tensor names; embedding
// models keep Runtime).
func (p *Plan) RuntimeLabel() string {
	if p.Converter == nil || p.Converter.Embedding() {
		return p.Runtime
	}
	names := make([]string, len(p.Tensors))
	for i, t := range p.Tensors {
		names[i] = t.GGUFName
	}
	return runtimeLabel(p.Arch, p.Runtime, names)
}

// runtimeLabel is the runtime a written file of the causal GGUF arch is for:
// runtime (the outtype's, format.Spec.Runtime; bitnet.cpp for float
// outtypes), except that a file with per-projection input norms (a tensor
// named *_norm_in.weight) runs only in this project's runtime, and a file of
// an arch the runtime has no graph for (a float qwen2/qwen3 file: bitnet.cpp
// knows neither) is mainline llama.cpp's when mainline has it
// (archtab.Arch.Targets). Archs outside the causal table keep runtime.
func runtimeLabel(arch, runtime string, tensorNames []string) string {
	row := archtab.Causal(arch)
	if row == nil {
		return runtime
	}
	for _, n := range tensorNames {
		if strings.HasSuffix(n, "_norm_in.weight") {
			return "this project's runtime only"
		}
	}
	if _, has := row.Target(archtab.Runtime(runtime)); !has {
		if _, main := row.Target(archtab.Mainline); main {
			return format.RuntimeLlamaCpp
		}
	}
	return runtime
}
