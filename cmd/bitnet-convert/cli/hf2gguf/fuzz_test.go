package hf2gguf

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// FuzzReadMetadata feeds arbitrary bytes as the --metadata TOML file: it
// must never panic; an error names the file on one line; accepted keys are
// general.* and not protected, and the GGUF writer accepts them after the
// override rule of convert (a later key replaces an earlier one).
func FuzzReadMetadata(f *testing.F) {
	for _, s := range []string{
		"\"general.name\" = \"tiny\"\n\"general.license\" = \"MIT\"\n",
		"[general]\nname = \"x\"\ntags = [\"a\", \"b\"]\nsize = 5\nratio = 0.5\nfinetuned = true\n",
		"[general]\nname = \"a\"\n\"general.name\" = \"b\"\n",
		"general.architecture = \"llama\"\n",
		"[general]\nx = 18446744073709551615\ny = -1\nz = 1979-05-27T07:32:00Z\n",
		"[general]\nbad = [1, 2]\nsub = { a = 1 }\n",
		"tokenizer.ggml.model = \"gpt2\"\n",
		"[[general.list]]\na = 1\n",
		"",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "meta.toml")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		kvs, err := ReadMetadata(p)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, p) {
				t.Fatalf("error does not name the file: %q", msg)
			}
			return
		}
		all := []gguf.KV{{Key: "general.architecture", Value: gguf.String("bitnet")}}
		for _, kv := range kvs {
			if !strings.HasPrefix(kv.Key, "general.") || protectedKeys[kv.Key] {
				t.Fatalf("accepted key %q", kv.Key)
			}
			if err := writer.CheckValue(kv.Value); err != nil {
				t.Fatalf("key %q: value the writer rejects: %v", kv.Key, err)
			}
			replaced := false
			for i := range all {
				if all[i].Key == kv.Key {
					all[i] = kv
					replaced = true
				}
			}
			if !replaced {
				all = append(all, kv)
			}
		}
		if _, err := writer.New(io.Discard, all, nil, 0); err != nil {
			t.Fatalf("writer rejects the accepted metadata: %v", err)
		}
	})
}
