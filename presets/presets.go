package presets

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

//go:embed *.toml
var files embed.FS

// Kernels is one arch's kernel setup for a model: Shapes[i] is [M, K] (HF
// [out, in] order) and BM[i], BK[i], Bm[i] are its tiling, in the order
// bitnet.cpp's setup_env.py passes them (spec codegen.md §1.3).
type Kernels struct {
	Shapes [][2]int `toml:"shapes"`
	BM     []int    `toml:"BM"`
	BK     []int    `toml:"BK"`
	Bm     []int    `toml:"bm"`
}

// Model is one known model.
type Model struct {
	// Name is the model name bitnet.cpp uses (the HF repo's basename), e.g.
	// "bitnet_b1_58-large".
	Name string `toml:"name"`
	// HFRepo is the Hugging Face repository, e.g. "1bitLLM/bitnet_b1_58-large".
	HFRepo string `toml:"hf_repo"`
	// Config is the model's config.json (null-valued keys omitted; see the
	// package doc for the value types).
	Config map[string]any `toml:"config"`
	// Packed is true when the real checkpoint stores packed U8 ternary
	// weights plus weight_scale (spec conversion.md §2.4).
	Packed bool `toml:"packed"`
	// Tokenizer names the real tokenizer family: "llama3", "llama2",
	// "qwen3", "gemma3", or "" when none of those.
	Tokenizer string `toml:"tokenizer"`
	// Codegen maps "tl1"/"tl2" to setup_env.py's kernel arguments; nil or
	// missing keys when the reference has no own table for the model.
	Codegen map[string]Kernels `toml:"codegen"`
}

var (
	loadOnce sync.Once
	models   []Model
	loadErr  error
)

func load() {
	names, err := fs.Glob(files, "*.toml")
	if err != nil {
		loadErr = err
		return
	}
	for _, n := range names {
		data, err := files.ReadFile(n)
		if err != nil {
			loadErr = err
			return
		}
		var m Model
		md, err := toml.Decode(string(data), &m)
		if err != nil {
			loadErr = fmt.Errorf("presets: %s: %w", n, err)
			return
		}
		for _, k := range md.Undecoded() {
			// Keys inside [config] land in a map[string]any; the decoder
			// still lists nested ones as undecoded.
			if k[0] != "config" {
				loadErr = fmt.Errorf("presets: %s: unknown key %v", n, k)
				return
			}
		}
		if m.Name+".toml" != n {
			loadErr = fmt.Errorf("presets: %s: name %q does not match the file name", n, m.Name)
			return
		}
		for arch, k := range m.Codegen {
			if len(k.BM) != len(k.Shapes) || len(k.BK) != len(k.Shapes) || len(k.Bm) != len(k.Shapes) {
				loadErr = fmt.Errorf("presets: %s: codegen.%s: shapes, BM, BK and bm lengths differ", n, arch)
				return
			}
		}
		models = append(models, m)
	}
	sort.Slice(models, func(i, j int) bool { return models[i].Name < models[j].Name })
}

// mustLoad returns the parsed presets. The files are embedded and checked by
// the tests, so a parse failure is a programmer error and panics.
func mustLoad() []Model {
	loadOnce.Do(load)
	if loadErr != nil {
		panic(loadErr)
	}
	return models
}

// All returns every preset sorted by Name (byte order). The slice is a
// fresh copy; the Config and Codegen maps are shared and must not be mutated.
func All() []Model {
	return append([]Model(nil), mustLoad()...)
}

// Names returns the preset names sorted, as All orders them.
func Names() []string {
	var out []string
	for _, m := range mustLoad() {
		out = append(out, m.Name)
	}
	return out
}

// Get returns the preset named name (exact, case-sensitive match). An unknown
// name returns an error that lists every known name.
func Get(name string) (Model, error) {
	for _, m := range mustLoad() {
		if m.Name == name {
			return m, nil
		}
	}
	return Model{}, fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(Names(), ", "))
}

// TilingFor returns the preset whose setup_env.py table for arch ("tl1" or
// "tl2") lists exactly shapes ([M, K] pairs, compared as a set), and that
// table. hf2gguf and `codegen --from-config` use it so that a checkpoint of
// a known model gets the tiling `codegen --model NAME` compiles into
// bitnet.cpp, not one derived from the shapes (defect D7).
func TilingFor(arch string, shapes [][2]int) (Model, Kernels, bool) {
	want := map[[2]int]bool{}
	for _, s := range shapes {
		want[s] = true
	}
	for _, m := range mustLoad() {
		k, ok := m.Codegen[arch]
		if !ok || len(k.Shapes) != len(want) {
			continue
		}
		match := true
		for _, s := range k.Shapes {
			match = match && want[s]
		}
		if match {
			return m, k, true
		}
	}
	return Model{}, Kernels{}, false
}
