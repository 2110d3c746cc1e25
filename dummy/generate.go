package dummy

import (
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
	"github.com/bitnet-convert/bitnet-convert/internal/parallel"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// DefaultMaxShardBytes is the shard size limit save_pretrained uses ("5GB",
// decimal): a checkpoint larger than this is split into
// model-0000i-of-0000N.safetensors files plus model.safetensors.index.json.
const DefaultMaxShardBytes = 5_000_000_000

// Linear classes accepted for quantization_config.linear_class (spec
// conversion.md §2.4: autobitlinear multiplies by weight_scale, bitlinear
// divides).
const (
	AutoBitLinear = "autobitlinear"
	BitLinear     = "bitlinear"
)

// Std is the standard deviation of the random weights and of the norms'
// offsets from their centre.
const Std = 0.02

// Options configures Generate.
type Options struct {
	// Config is the model's config.json as a map (a preset's Config or a
	// parsed file). It is not modified.
	Config map[string]any
	// Layers replaces num_hidden_layers when > 0.
	Layers int
	// VocabSize replaces vocab_size when > 0 (tests and benchmarks that need
	// the real layout with a smaller embedding).
	VocabSize int
	// Packed writes projections as U8 codes + bf16 0-d weight_scale and makes
	// sure quantization_config.quant_method is "bitnet" (quantization_mode
	// becomes "offline" when the key is present).
	Packed bool
	// LinearClass, when not empty, sets quantization_config.linear_class
	// (AutoBitLinear or BitLinear); only with Packed.
	LinearClass string
	// Tokenizer is a directory whose tokenizer files (TokenizerFiles, or
	// their .gz) are copied (decompressed) into the output; "" for none.
	Tokenizer string
	// Seed makes the weights: the same seed gives the same bytes.
	Seed uint64
	// MaxShardBytes is the shard size limit; 0 means DefaultMaxShardBytes.
	MaxShardBytes uint64
	// Force allows an output directory that already holds a checkpoint; its
	// config.json, *.safetensors and index are replaced.
	Force bool
	// Threads is the number of goroutines drawing values; 0 = GOMAXPROCS.
	// The output does not depend on it.
	Threads int
	// Progress, when set, is called after each tensor is written.
	Progress func(done, total int, name string)
}

// Result describes a generated checkpoint.
type Result struct {
	Dir string
	// Config is the config.json written.
	Config map[string]any
	// Tensors in HF module order.
	Tensors []Tensor
	// Files are the safetensors base names, in order.
	Files []string
	// TokenizerFiles are the base names of the copied tokenizer files.
	TokenizerFiles []string
	// Bytes is the total tensor data size.
	Bytes uint64
}

// TokenizerFiles are the tokenizer file names copied from Options.Tokenizer
// (each also accepted gzip-compressed with a ".gz" suffix).
var TokenizerFiles = []string{"tokenizer.json", "tokenizer_config.json", "tokenizer.model", "special_tokens_map.json", "added_tokens.json", "vocab.json", "merges.txt", "generation_config.json"}

// ErrExists is wrapped when the output directory already holds a checkpoint
// and Options.Force is not set.
var ErrExists = errors.New("output directory already holds a checkpoint")

// config returns the config.json Generate writes for o: a deep copy of
// opts.Config with num_hidden_layers, vocab_size and quantization_config
// adjusted as Options describes.
func (o Options) config() (map[string]any, error) {
	cfg, err := deepCopy(o.Config)
	if err != nil {
		return nil, err
	}
	if o.Layers > 0 {
		cfg["num_hidden_layers"] = o.Layers
	}
	if o.VocabSize > 0 {
		cfg["vocab_size"] = o.VocabSize
	}
	if o.LinearClass != "" && !o.Packed {
		return nil, fmt.Errorf("linear class %q needs packed weights (--packed)", o.LinearClass)
	}
	if o.LinearClass != "" && o.LinearClass != AutoBitLinear && o.LinearClass != BitLinear {
		return nil, fmt.Errorf("linear class %q is unknown (use %s or %s)", o.LinearClass, AutoBitLinear, BitLinear)
	}
	qc, _ := cfg["quantization_config"].(map[string]any)
	if o.Packed {
		if qc == nil {
			qc = map[string]any{}
			cfg["quantization_config"] = qc
		}
		qc["quant_method"] = "bitnet"
		if o.LinearClass != "" {
			qc["linear_class"] = o.LinearClass
		}
	}
	if _, ok := qc["quantization_mode"]; ok {
		if o.Packed {
			qc["quantization_mode"] = "offline"
		} else {
			qc["quantization_mode"] = "online"
		}
	}
	return cfg, nil
}

func deepCopy(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return out, nil
}

// scaleMultiplies reports whether weight_scale multiplies (autobitlinear) or
// divides (bitlinear, the transformers default when linear_class is absent).
func scaleMultiplies(cfg map[string]any) bool {
	qc, _ := cfg["quantization_config"].(map[string]any)
	lc, _ := qc["linear_class"].(string)
	return lc == AutoBitLinear
}

// Plan returns the config.json and tensor layout Generate would write for
// opts, without writing anything.
func Plan(opts Options) (map[string]any, []Tensor, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, nil, err
	}
	ts, err := Layout(cfg, opts.Packed)
	if err != nil {
		return nil, nil, err
	}
	return cfg, ts, nil
}

// Generate writes a Hugging Face checkpoint with seeded random weights to
// dir (created if needed): the safetensors file(s) in the layout of Layout,
// sharded when larger than MaxShardBytes, the tokenizer files, and
// config.json, written last. Values: projections, embedding and head
// N(0, 0.02²) as bf16 (biases too); norms 1 + N(0, 0.02²) (Gemma offset norms N(0, 0.02²));
// packed codes uniform in {0, 1, 2} (ternary −1, 0, +1), four per byte along
// rows as spec conversion.md §2.4 unpacks them; weight_scale s in
// [0.015, 0.025) stored as s (autobitlinear) or 1/s (bitlinear), so the
// effective weight is ±s either way. Data streams tensor by tensor in
// fixed-size chunks, each with its own PCG stream seeded from (Seed, tensor
// name, chunk), so memory is small and the bytes depend only on the seed.
// Before anything is written, the planned size is checked against the
// free space of dir's filesystem (an error wrapping ErrNoSpace when it does
// not fit with a SpaceMargin margin) and absurd shapes are refused (see
// Layout). Every file is written atomically; on any error or cancellation
// the files written so far are removed, and so are the directories Generate
// created (never one that existed before). An existing checkpoint in dir is an error wrapping ErrExists
// unless Force is set.
func Generate(ctx context.Context, dir string, opts Options) (*Result, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	// Size and disk space first, from the rules alone: a mistyped config
	// must not build a huge tensor list or start filling the disk.
	need, err := planBytes(cfg, opts.Packed)
	if err != nil {
		return nil, err
	}
	tokFiles, err := findTokenizerFiles(opts.Tokenizer)
	if err != nil {
		return nil, err
	}
	var reclaim uint64
	if opts.Force {
		reclaim = oldCheckpointBytes(dir)
	}
	if err := checkSpace(dir, need, reclaim); err != nil {
		return nil, err
	}
	tensors, err := Layout(cfg, opts.Packed)
	if err != nil {
		return nil, err
	}
	_, created := existingAncestor(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res := &Result{Dir: dir, Config: cfg, Tensors: tensors}
	var written []string
	ok := false
	defer func() {
		if !ok {
			for _, p := range written {
				os.Remove(p)
			}
			removeCreated(dir, created)
		}
	}()
	if err := prepareDir(dir, opts.Force); err != nil {
		return nil, err
	}
	maxShard := opts.MaxShardBytes
	if maxShard == 0 {
		maxShard = DefaultMaxShardBytes
	}
	shards := splitShards(tensors, maxShard)
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	mult := scaleMultiplies(cfg)
	done := 0
	weightMap := map[string]string{}
	for i, shard := range shards {
		name := hf.SingleFile
		if len(shards) > 1 {
			name = fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(shards))
		}
		// Within a file, tensors are listed by name, as safetensors'
		// serializer sorts them.
		sort.Slice(shard, func(a, b int) bool { return shard[a].Name < shard[b].Name })
		wts := make([]hf.WriteTensor, len(shard))
		for j, t := range shard {
			wts[j] = hf.WriteTensor{Name: t.Name, DType: t.DType, Shape: t.Shape, Data: func(w io.Writer) error {
				if err := fill(ctx, w, t, opts.Seed, mult, threads); err != nil {
					return err
				}
				done++
				if opts.Progress != nil {
					opts.Progress(done, len(tensors), t.Name)
				}
				return nil
			}}
			weightMap[t.Name] = name
			res.Bytes += t.Bytes()
		}
		path := filepath.Join(dir, name)
		written = append(written, path)
		if err := hf.WriteSafetensors(path, wts, map[string]string{"format": "pt"}); err != nil {
			return nil, err
		}
		res.Files = append(res.Files, name)
	}
	if len(shards) > 1 {
		idx := map[string]any{"metadata": map[string]any{"total_size": res.Bytes}, "weight_map": weightMap}
		b, _ := json.MarshalIndent(idx, "", "  ")
		path := filepath.Join(dir, hf.IndexFile)
		written = append(written, path)
		if err := atomicfile.WriteFile(path, append(b, '\n'), true); err != nil {
			return nil, err
		}
	}
	for _, tf := range tokFiles {
		path := filepath.Join(dir, tf.name)
		written = append(written, path)
		if err := copyTokenizerFile(path, tf.src); err != nil {
			return nil, err
		}
		res.TokenizerFiles = append(res.TokenizerFiles, tf.name)
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	path := filepath.Join(dir, hf.ConfigFile)
	written = append(written, path)
	if err := atomicfile.WriteFile(path, append(b, '\n'), true); err != nil {
		return nil, err
	}
	ok = true
	return res, nil
}

// removeCreated removes dir and its parents up to top, the topmost
// directory Generate created ("" for none). os.Remove only removes empty
// directories, so nothing else placed there meanwhile is lost.
func removeCreated(dir, top string) {
	if top == "" {
		return
	}
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if os.Remove(p) != nil || p == top || filepath.Dir(p) == p {
			return
		}
	}
}

// prepareDir refuses (or, with force, clears) an existing checkpoint in dir:
// config.json, *.safetensors and the index are removed so no stale shard of
// an earlier run remains.
func prepareDir(dir string, force bool) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var old []string
	for _, e := range ents {
		n := e.Name()
		if n == hf.ConfigFile || n == hf.IndexFile || strings.HasSuffix(n, ".safetensors") {
			old = append(old, n)
		}
	}
	if len(old) == 0 {
		return nil
	}
	if !force {
		return fmt.Errorf("%s: %w (%s); choose another --out or pass --force to replace it", dir, ErrExists, strings.Join(old, ", "))
	}
	for _, n := range old {
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// splitShards fills shards in module order as save_pretrained does: a tensor
// goes to a new shard when adding it would pass max (a single larger tensor
// gets a shard of its own).
func splitShards(ts []Tensor, max uint64) [][]Tensor {
	var out [][]Tensor
	var cur []Tensor
	var size uint64
	for _, t := range ts {
		b := t.Bytes()
		if len(cur) > 0 && size+b > max {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, t)
		size += b
	}
	if len(cur) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

type tokFile struct{ name, src string }

// findTokenizerFiles lists the TokenizerFiles present in dir (plain or
// .gz; plain wins). A dir with none of them is an error naming it.
func findTokenizerFiles(dir string) ([]tokFile, error) {
	if dir == "" {
		return nil, nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("tokenizer: %s is not a directory (give the directory holding tokenizer.json / tokenizer.model)", dir)
	}
	var out []tokFile
	for _, n := range TokenizerFiles {
		for _, src := range []string{n, n + ".gz"} {
			p := filepath.Join(dir, src)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				out = append(out, tokFile{name: n, src: p})
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("tokenizer: %s holds none of %s (or their .gz)", dir, strings.Join(TokenizerFiles, ", "))
	}
	for _, tf := range out {
		if strings.HasSuffix(tf.name, ".json") {
			if err := checkJSONFile(tf.src); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// checkJSONFile refuses a tokenizer .json file (plain or .gz) that is not
// one JSON object, naming it, before anything is written: copied as it is,
// it would only fail later in hf2gguf (Hugging Face tokenizers cannot load
// it either). The file is read as a token stream, so its size does not
// matter.
func checkJSONFile(src string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	defer in.Close()
	var r io.Reader = in
	if strings.HasSuffix(src, ".gz") {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return fmt.Errorf("tokenizer %s: %w", src, err)
		}
		defer zr.Close()
		r = zr
	}
	bad := func(why string) error {
		return fmt.Errorf("tokenizer %s: %s; give a directory with the model's own tokenizer files", src, why)
	}
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err == io.EOF {
		return bad("the file is empty, want a JSON object")
	}
	if d, ok := tok.(json.Delim); err == nil && (!ok || d != '{') {
		return bad("not a JSON object")
	}
	for depth := 1; err == nil && depth > 0; {
		if tok, err = dec.Token(); err == nil {
			if d, ok := tok.(json.Delim); ok {
				if d == '{' || d == '[' {
					depth++
				} else {
					depth--
				}
			}
		}
	}
	if err == nil {
		if _, err = dec.Token(); err == io.EOF {
			return nil
		}
		if err == nil {
			return bad("data after the JSON object")
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return bad("not valid JSON: " + err.Error())
}

// copyTokenizerFile copies src to dst atomically, gunzipping a .gz source.
func copyTokenizerFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	defer in.Close()
	var r io.Reader = in
	if strings.HasSuffix(src, ".gz") {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return fmt.Errorf("tokenizer %s: %w", src, err)
		}
		defer zr.Close()
		r = zr
	}
	f, err := atomicfile.Create(dst, true)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := io.Copy(f, r); err != nil {
		return f.NameTarget(fmt.Errorf("tokenizer %s: %w", src, err))
	}
	return f.NameTarget(f.Commit())
}

// chunkElems is the number of values drawn from one PCG stream; chunks are
// fixed so the bytes do not depend on the thread count.
const chunkElems = 1 << 16

// batchChunks is how many chunks are drawn in parallel before writing.
const batchChunks = 32

// streamSeed mixes the user seed with the tensor name.
func streamSeed(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return seed ^ h.Sum64()
}

// fill writes t's data: chunks drawn in parallel, written in order.
func fill(ctx context.Context, w io.Writer, t Tensor, seed uint64, multiply bool, threads int) error {
	s := streamSeed(seed, t.Name)
	if t.Role == WeightScale {
		r := rand.New(rand.NewPCG(s, 0))
		v := float32(0.015 + 0.01*r.Float64())
		if !multiply {
			v = 1 / v
		}
		var b [2]byte
		binary.LittleEndian.PutUint16(b[:], quantize.F32ToBF16(v))
		_, err := w.Write(b[:])
		return err
	}
	es := t.DType.Size()
	n := t.Bytes() / es
	nChunks := (n + chunkElems - 1) / chunkElems
	bufs := make([][]byte, min(uint64(batchChunks), nChunks))
	for i := range bufs {
		bufs[i] = make([]byte, chunkElems*es)
	}
	for c0 := uint64(0); c0 < nChunks; c0 += uint64(len(bufs)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := min(uint64(len(bufs)), nChunks-c0)
		parallel.For(int(k), threads, func(lo, hi int) {
			for i := uint64(lo); i < uint64(hi); i++ {
				c := c0 + i
				m := min(uint64(chunkElems), n-c*chunkElems)
				drawChunk(bufs[i][:m*es], t.Role, t.DType, rand.New(rand.NewPCG(s, c)))
			}
		})
		for i := uint64(0); i < k; i++ {
			c := c0 + i
			m := min(uint64(chunkElems), n-c*chunkElems)
			if _, err := w.Write(bufs[i][:m*es]); err != nil {
				return err
			}
		}
	}
	return nil
}

// packedBytes[d] is the byte holding the four 2-bit codes of d's base-3
// digits (codes 0, 1, 2; never the unused 3).
var packedBytes = func() (t [81]byte) {
	for d := range t {
		x := d
		var b byte
		for i := 0; i < 4; i++ {
			b |= byte(x%3) << (2 * i)
			x /= 3
		}
		t[d] = b
	}
	return
}()

// drawChunk fills buf with the values of one chunk.
func drawChunk(buf []byte, role Role, dt hf.DType, r *rand.Rand) {
	if dt == hf.U8 {
		for i := 0; i < len(buf); {
			x := r.Uint64()
			// Eight base-81 digits per 64-bit draw by multiply-shift:
			// x·81^j mod 2^64 stays uniform (81 is odd), so each digit
			// is close to uniform.
			for j := 0; j < 8 && i < len(buf); j++ {
				hi, lo := bits.Mul64(x, 81)
				buf[i] = packedBytes[hi]
				x = lo
				i++
			}
		}
		return
	}
	centre := 0.0
	if role == Norm {
		centre = 1
	}
	for i := 0; i+1 < len(buf); i += 2 {
		v := float32(centre + Std*r.NormFloat64())
		binary.LittleEndian.PutUint16(buf[i:], quantize.F32ToBF16(v))
	}
}
