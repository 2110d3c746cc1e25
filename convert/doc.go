// Package convert turns a Hugging Face BitNet checkpoint directory into a GGUF
// file that bitnet.cpp runs, in one pass and tensor by tensor.
//
// The work is split in two steps that share one data structure:
//
//   - Plan reads config.json, the safetensors headers and the tokenizer, and
//     decides every output tensor (GGUF name, ne, ggml type, bytes) and every
//     KV. `--dry-run` prints a Plan; nothing is written.
//   - Convert streams the planned tensors to a GGUF writer: for each tensor it
//     reads the input (pread into reused buffers, TensorData.ReadAt; the
//     general projection path reads the mapping and releases it afterwards),
//     ternarizes or unpacks the seven projections, packs them (I2_S, TL1, TL2)
//     or converts them (F32, F16, BF16), and hands the bytes to a writer
//     goroutine (pipeline.go) that writes tensor i while tensor i+1 is being
//     computed. A bf16 projection going to I2_S takes a fused path
//     (fused.go): abs-mean block sums straight from the bf16 bytes, then
//     ternarize-and-pack into the output, with no float32 copy; it gives the
//     general path's bytes. The work inside one tensor is split over
//     goroutines by fixed chunks, so the output is byte-identical for any
//     GOMAXPROCS.
//
// Architectures are registered converters (Register) keyed by the
// checkpoint's config.json "architectures" entry; each one is a small file
// (convert_bitnet.go, …) holding its tensor-name table and hyper-parameter
// rules. The tensor type policy is a table (policy.go). The BitNet
// sentence-embedding models (Qwen3Model → arch qwen3, Gemma3TextModel → arch
// gemma3; embedding.go, convert_qwen3.go, convert_gemma3.go, pooling.go) are
// rows of one table: no output head, the per-projection *_norm_in weights,
// Gemma's (1 + w) norm fix, head_dim in three keys and the pooling type from
// the sentence-transformers files (spec §1.4, §5.5, §6).
//
// LlamaForCausalLM checkpoints with quantization_config.quant_method
// "bitnet" (Llama3-8B-1.58, Falcon3 1.58bit, Falcon-E) convert to GGUF arch
// llama (convert_llama.go): plain llama names, untied output, q/k rows
// interleaved for llama's rope (the RopePermuter hook). Per-projection input
// norms (quantization_config.use_rms_norm's "<proj>.rms_norm", BitNet
// Distillation's "<proj>.norm") become blk.N.<proj>_norm_in with the eps in
// {arch}.attention.norm_in_rms_epsilon, for I2_S and the float types only
// (normin.go, the TensorSetChecker hook); Falcon-E is no special case, its
// config's keys decide. Float masters without a quantization_config convert
// only with --ternarize (Options.Ternarize). Falcon's pre-tokenizer name per
// outtype: pre.go. MistralForCausalLM is the same row of the architecture table
// (archtab.Llama, as mainline's convert_hf_to_gguf.py maps it).
//
// HF BitNet checkpoints of the other causal graphs (Qwen2ForCausalLM → arch
// qwen2 with float q/k/v biases, Qwen3ForCausalLM → arch qwen3 with q/k
// norms; formats-2026.md §4) need no converter of their own: the generic
// one (convert_hfbitnet.go) reads the arch, tensor table and key set from
// their archtab rows (Arch.Generic) and writes only the outtypes whose
// runtime has the graph (Arch.Targets: mainline's TQ1_0/TQ2_0/Q2_0 and the
// floats; I2_S/TL are refused, bitnet.cpp has no causal qwen graph, except
// with per-projection input norms, which only our runtime reads: then I2_S
// and the floats, normin.go).
//
// Group-scaled ternary checkpoints (Ternary Bonsai "-unpacked"; shared/spec
// formats-2026.md §5) have no quantization_config: an architecture that
// takes them implements DenseCandidate, and NewPlan then reads every
// projection (GroupTernary: one nonzero magnitude per 128 inputs of a row,
// compared bit for bit) and refuses the checkpoint with the architecture's
// usual refusal when one is not. Their projections keep every code and
// group scale in Q2_0 (groupscaled.go); coarser-scaled outtypes are refused
// unless Options.Ternarize asks for the lossy abs-mean conversion.
//
// # Adding an architecture
//
// Every package reads the one architecture table, archtab (archtab.Arch: HF
// classes and model_type, GGUF arch per target runtime, FFN activation,
// rope pairing, norm vectors, biases, q/k norms, per-projection norms, tie
// rule, tensormap table, hyper-parameter key set, TL2): the runtime loader,
// verify's float reference and metadata check, requant's arch set, format's
// per-runtime arch names, gguf's TL2 detection, hfexport and gpupack. The
// geometry rule (head_dim precedence, KV heads, FFN width, the config key
// aliases) is hf.Config.Geometry for every package.
//
// An HF BitNet checkpoint whose graph combines features the table already
// has (as Qwen3ForCausalLM: NEOX rope, SiLU, q/k norms) takes four files,
// and no converter, runtime or verify code:
//
//  1. tensormap/tables.go: a Table, one row per tensor: HF stem → GGUF
//     stem, class (Bias rules before the projection rule of their stem),
//     expected HF shape in geometry dims (tensormap.Shape; the converter
//     checks every tensor against it and dummy writes it). Skip when an
//     existing table fits.
//  2. archtab/archtab.go: a row with Generic set (the generic HF BitNet
//     converter, convert_hfbitnet.go, registers its HF classes), listed in
//     rows. For a new HF class of an existing graph, add the class to that
//     row's HF list instead (MistralForCausalLM on archtab.Llama).
//  3. dummy/layout.go: a row of families (prefix, the archtab row, the
//     layer's HF names and value roles in module order); a preset in
//     presets/ when the model is public.
//  4. Tests: a case of convert/hfbitnet_test.go (a dummy at reduced size,
//     packed and bf16 masters, through hf2gguf for every outtype: the
//     accepted ones give the expected tensor table and the KVs mainline
//     writes, the refused ones one line) and of dummy/hfbitnet_test.go
//     (the layout). Add an oracle reference in testdata when one can load
//     the arch.
//
// What needs more than rows:
//   - a checkpoint that needs converter hooks (rope permutation, extra KVs,
//     vocabulary fixes, Gemma's norm fix, its own refusals): a
//     convert/convert_<arch>.go Converter registered in init for the row's
//     HF classes, reading Arch, Table and HParams from the row, with only
//     the optional hooks it needs (OutTypeLimiter, ExtraKVser,
//     TokenizerJSONPreferrer, VocabFixer, GemmaNormFixer, RopePermuter;
//     declared beside the interface in convert.go; DenseCandidate, in
//     groupscaled.go, to take group-scaled dense checkpoints;
//     TensorSetChecker in normin.go). Refuse configs you
//     cannot convert exactly in the NewFunc, one line naming config.json
//     and the key;
//   - a graph feature no row has yet: a field of archtab.Arch, the runtime
//     (runtime/model.go archSpecOf and the graph), verify's float
//     reference (verify/reference.go), and the consumers that filter on
//     Arch.Plain;
//   - a new embedding model: a runtime/embed_<arch>.go row of embedArchs.
//
// Running our runtime and verify on a new row's files is the runtime's
// part: until runtime/model.go's archSpecOf accepts the row's features the
// loader refuses the arch, naming the ones it runs.
//
// Shapes: HF shapes are [out, in] (row-major, in fastest); GGUF ne is the
// reverse ([in, out]). Plans keep both.
//
// Rules and their sources: ternarization matches bitnet.cpp
// BitnetModel.weight_quant (spec conversion.md §2.1), packed checkpoints §2.4
// (with our weight_scale rule), the I2_S layout §3.1, KVs §1.2 and §5,
// tensor order §5.4.
package convert
