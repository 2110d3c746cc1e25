// Package modelfile opens the model of the runtime commands (Open: run,
// perplexity, bench and embed share one path) and explains why a GGUF file
// cannot be run: a vocab-only
// file (hf2gguf --vocab-only, llama.cpp's ggml-vocab-*.gguf) has a tokenizer
// and hyper-parameters but no tensors, and the runtime's "tensor
// token_embd.weight: missing" would not say so. It also checks the flags
// that describe a file against what the file records (--from-layout).
package modelfile

import (
	"fmt"
	"os"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// Explain returns err unchanged unless path is a GGUF file with no tensors,
// in which case it returns a one-line error saying the file is vocab-only
// and what works on it. cmd names the command for the message.
func Explain(cmd, path string, err error) error {
	if err == nil {
		return nil
	}
	if v := RefuseVocabOnly(cmd, path); v != nil {
		return v
	}
	return err
}

// RefuseVocabOnly returns Explain's one-line error when path is a GGUF file
// with no tensors, and nil otherwise (also when it cannot be opened: the
// command's own open reports that). Commands that would not fail on such a
// file by themselves call it first: requant wrote a tensor-less file with
// a file type, verify --ref-gguf compared with nothing (defect H17).
func RefuseVocabOnly(cmd, path string) error {
	f, err := reader.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if len(f.Tensors) != 0 {
		return nil
	}
	return fmt.Errorf("%s is a vocab-only GGUF (tokenizer and hyper-parameters, no tensors): %s needs a converted model; `bitnet-convert tokenize -m %s` works on it", path, cmd, path)
}

// CheckFromLayout rejects a --from-layout value (flag, already validated by
// format.ParseLayout) that disagrees with the I2_S layout the GGUF at path
// records under format.LayoutKey: the flag is for files that record no
// layout (bitnet.cpp's own ARM and 1×4 files), and overriding a recorded
// layout decodes every I2_S tensor into wrong codes. The error is a
// *usage.Error (exit 2) naming the flag and the recorded layout. An empty
// flag, a file that records no layout, or one that cannot be opened (the
// command's own open reports that) give nil.
func CheckFromLayout(path, flag string) error {
	if flag == "" {
		return nil
	}
	f, err := reader.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	rec, ok := f.String(format.LayoutKey)
	if !ok {
		return nil
	}
	want, err := format.ParseLayout(flag)
	if err != nil {
		return usage.Errorf("--from-layout: %v", err)
	}
	if got, err := format.ParseLayout(rec); err == nil && got == want {
		return nil
	}
	return usage.Errorf("--from-layout %s: %s records its I2_S layout as %s (key %s); the flag is only for files that record none, drop it", flag, path, rec, format.LayoutKey)
}

// PositionalModel is the Args check of the commands that take the model
// as -m FILE (run, perplexity, bench, embed): llama.cpp users type the
// file first by habit, so an argument that names a .gguf or an existing
// file is refused with "give it as -m FILE"; any other argument gets
// "cmd takes no arguments" with what to use (rest). Both are usage errors.
func PositionalModel(cmd string, args []string, rest string) error {
	if len(args) == 0 {
		return nil
	}
	for _, a := range args {
		if strings.HasSuffix(strings.ToLower(a), ".gguf") || isFile(a) {
			return usage.Errorf("%s takes the model as a flag: give it as -m %s", cmd, a)
		}
	}
	return usage.Errorf("%s takes no arguments (got %q); %s", cmd, args, rest)
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
