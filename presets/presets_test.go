package presets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// configFile maps each preset to its source config.json in testdata.
var configFile = map[string]string{
	"bitnet_b1_58-large":           "1bitLLM_bitnet_b1_58-large",
	"bitnet_b1_58-3B":              "1bitLLM_bitnet_b1_58-3B",
	"BitNet-b1.58-2B-4T":           "microsoft_bitnet-b1.58-2B-4T",
	"BitNet-b1.58-2B-4T-bf16":      "microsoft_bitnet-b1.58-2B-4T-bf16",
	"Llama3-8B-1.58-100B-tokens":   "HF1BitLLM_Llama3-8B-1.58-100B-tokens",
	"Falcon3-1B-Instruct-1.58bit":  "tiiuae_Falcon3-1B-Instruct-1.58bit",
	"Falcon3-3B-Instruct-1.58bit":  "tiiuae_Falcon3-3B-Instruct-1.58bit",
	"Falcon3-7B-Instruct-1.58bit":  "tiiuae_Falcon3-7B-Instruct-1.58bit",
	"Falcon3-10B-Instruct-1.58bit": "tiiuae_Falcon3-10B-Instruct-1.58bit",
	"bitnet-embedding-0.6b":        "microsoft_bitnet-embedding-0.6b",
	"bitnet-embedding-270m":        "microsoft_bitnet-embedding-270m",
}

// normJSON converts a decoded JSON value (numbers as json.Number) to the TOML
// decoder's types and drops null-valued object keys.
func normJSON(t *testing.T, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e == nil {
				continue
			}
			out[k] = normJSON(t, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normJSON(t, e)
		}
		return out
	case json.Number:
		if !strings.ContainsAny(x.String(), ".eE") {
			n, err := x.Int64()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		f, err := x.Float64()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	return v
}

func TestConfigsMatchJSON(t *testing.T) {
	all := All()
	if len(all) != len(configFile) {
		t.Fatalf("got %d presets, want %d", len(all), len(configFile))
	}
	for _, m := range all {
		t.Run(m.Name, func(t *testing.T) {
			src, ok := configFile[m.Name]
			if !ok {
				t.Fatalf("no source config for %s", m.Name)
			}
			data, err := os.ReadFile(filepath.Join("..", "testdata", "configs", src+".config.json"))
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var raw any
			if err := dec.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			want := normJSON(t, raw)
			if !reflect.DeepEqual(map[string]any(m.Config), want) {
				t.Errorf("config differs\n got %#v\nwant %#v", m.Config, want)
			}
			if !strings.HasSuffix(m.HFRepo, "/"+m.Name) && !strings.EqualFold(m.HFRepo[strings.Index(m.HFRepo, "/")+1:], m.Name) {
				t.Errorf("HFRepo %q does not end in the name %q", m.HFRepo, m.Name)
			}
		})
	}
}

func TestSortedAndGet(t *testing.T) {
	names := Names()
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("not sorted: %q before %q", names[i-1], names[i])
		}
	}
	m, err := Get("bitnet_b1_58-3B")
	if err != nil {
		t.Fatal(err)
	}
	if m.Config["hidden_size"] != int64(3200) || m.Packed || m.Tokenizer != "llama2" {
		t.Errorf("3B preset: hidden %v packed %v tokenizer %q", m.Config["hidden_size"], m.Packed, m.Tokenizer)
	}
	_, err = Get("BitNet-b1.58-2B")
	if err == nil || !strings.Contains(err.Error(), "BitNet-b1.58-2B-4T") || !strings.Contains(err.Error(), "bitnet_b1_58-large") {
		t.Errorf("unknown name error should list the names, got %v", err)
	}
}

// TestCodegenTables checks the kernel arguments against spec codegen.md §1.2/§1.3.
func TestCodegenTables(t *testing.T) {
	type want struct {
		shapes     [][2]int
		BM, BK, bm []int
	}
	large := [][2]int{{1536, 4096}, {1536, 1536}, {4096, 1536}}
	b3 := [][2]int{{3200, 8640}, {3200, 3200}, {8640, 3200}}
	ll := [][2]int{{14336, 4096}, {4096, 14336}, {1024, 4096}, {4096, 4096}}
	cases := map[string]map[string]want{
		"bitnet_b1_58-large": {
			"tl1": {large, []int{256, 128, 256}, []int{128, 64, 128}, []int{32, 64, 32}},
			"tl2": {large, []int{256, 128, 256}, []int{96, 192, 96}, []int{32, 32, 32}},
		},
		"bitnet_b1_58-3B": {
			"tl1": {b3, []int{160, 320, 320}, []int{64, 128, 64}, []int{32, 64, 32}},
			"tl2": {b3, []int{160, 320, 320}, []int{96, 96, 96}, []int{32, 32, 32}},
		},
		"Llama3-8B-1.58-100B-tokens": {
			"tl1": {ll, []int{256, 128, 256, 128}, []int{128, 64, 128, 64}, []int{32, 64, 32, 64}},
			"tl2": {ll, []int{256, 128, 256, 128}, []int{96, 96, 96, 96}, []int{32, 32, 32, 32}},
		},
	}
	for _, m := range All() {
		c, ok := cases[m.Name]
		if !ok {
			if len(m.Codegen) != 0 {
				t.Errorf("%s: unexpected codegen table (the reference has none of its own)", m.Name)
			}
			continue
		}
		for arch, w := range c {
			k := m.Codegen[arch]
			got := want{k.Shapes, k.BM, k.BK, k.Bm}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("%s %s: got %+v want %+v", m.Name, arch, got, w)
			}
		}
	}
}

func ExampleGet() {
	m, err := Get("bitnet_b1_58-large")
	if err != nil {
		panic(err)
	}
	k := m.Codegen["tl2"]
	fmt.Println(m.HFRepo, m.Config["hidden_size"], k.Shapes[0], k.BM[0], k.BK[0], k.Bm[0])
	// Output: 1bitLLM/bitnet_b1_58-large 1536 [1536 4096] 256 96 32
}
