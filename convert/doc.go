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
// outtype: pre.go.
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
// aliases) is hf.Config.Geometry for every package. So an architecture whose
// graph is a combination of existing features takes:
//
//  1. tensormap/tables.go: a Table, one row per tensor: HF stem → GGUF
//     stem, class, expected HF shape in geometry dims (tensormap.Shape; the
//     converter checks every tensor against it and dummy writes it), flags.
//     (Skip when an existing table fits.)
//  2. archtab/archtab.go: a row (or, for a new HF class of an existing
//     graph, the class added to that row's HF list) and its entry in rows.
//  3. convert/convert_<arch>.go: a Converter registered in init for the
//     row's HF classes, reading Arch, Table and HParams from the row, plus
//     only the optional hooks it needs, declared beside the interface in
//     convert.go (OutTypeLimiter, ExtraKVser, TokenizerJSONPreferrer,
//     VocabFixer, GemmaNormFixer, RopePermuter; TensorSetChecker in
//     normin.go). Refuse configs you cannot
//     convert exactly in the NewFunc, one line naming config.json and the
//     key. (An HF class of an existing row reuses its converter.)
//  4. dummy/layout.go: a row of families (prefix, the archtab row, the
//     layer's HF names and value roles in module order), and a preset in
//     presets/ when the model is public.
//  5. Tests: a dummy of the real shapes through hf2gguf for every outtype
//     (accepted and refused), run and verify where the runtime has the
//     graph; a reference in testdata when an oracle can load the arch.
//
// Only a graph feature no row has yet needs code outside these: the
// runtime (runtime/model.go archSpecOf, the graph), verify's float
// reference (verify/reference.go) and, for a new embedding model, a
// runtime/embed_<arch>.go row of embedArchs.
//
// Shapes: HF shapes are [out, in] (row-major, in fastest); GGUF ne is the
// reverse ([in, out]). Plans keep both.
//
// Rules and their sources: ternarization matches bitnet.cpp
// BitnetModel.weight_quant (spec conversion.md §2.1), packed checkpoints §2.4
// (with our weight_scale rule), the I2_S layout §3.1, KVs §1.2 and §5,
// tensor order §5.4.
package convert
