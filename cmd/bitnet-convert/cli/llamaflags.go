package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// llamaFlag is a flag of llama.cpp's tools (llama-cli, llama-perplexity,
// llama-bench, llama-tokenize, llama-quantize, convert_hf_to_gguf.py) that
// the commands in cmds do not have, and what to do instead: the flag we
// have for it, or why it does not apply. Flags we have under llama.cpp's
// spelling (-t, -c, -s, --top-k, -o, --ids, …) are real flags, not here.
type llamaFlag struct {
	cmds  string   // space-separated command names
	flags []string // llama.cpp's spellings, as typed
	hint  string
}

// llamaFlags is the table of llamaFlagHint.
var llamaFlags = []llamaFlag{
	{"run perplexity bench embed verify", []string{"-ngl", "--n-gpu-layers", "--gpu-layers", "-ngld", "--n-gpu-layers-draft", "-dev", "--device", "-sm", "--split-mode", "-mg", "--main-gpu"},
		"the runtime computes on the CPU (use -t/--threads for the cores); drop it"},
	{"verify", []string{"--no-mmap", "--mmap", "-mmp", "--mlock"}, "verify always maps the files it compares; drop it"},
	{"run perplexity embed", []string{"--mmap"}, "memory-mapping the model is the default; drop it (--no-mmap reads the file into memory instead)"},
	{"run perplexity bench embed", []string{"-mmp"}, "llama-bench's -mmp 0 is --no-mmap here; -mmp 1 is the default, drop it"},
	{"bench", []string{"--mmap"}, "llama-bench's --mmap 0 is --no-mmap here; --mmap 1 is the default, drop it"},
	{"run perplexity bench embed", []string{"--mlock"}, "pages are not locked; --no-mmap reads the model into memory instead"},
	{"run perplexity bench embed", []string{"-fa", "--flash-attn"}, "there is no flash-attention switch (attention is computed one way); drop it"},
	{"run perplexity embed verify", []string{"-tb", "--threads-batch"}, "use -t/--threads (one count for the prompt and the generation)"},
	{"run embed", []string{"-b", "--batch-size", "-ub", "--ubatch-size"}, "the prompt is evaluated as one batch; drop it"},
	{"bench", []string{"-b", "--batch-size", "-ub", "--ubatch-size"}, "ppN evaluates its N tokens as one batch; drop it"},
	{"run", []string{"-f", "--file"}, `give the prompt text with -p "$(cat FILE)"`},
	{"run", []string{"--min-p", "--typical", "--tfs", "--mirostat", "--mirostat-lr", "--mirostat-ent", "--presence-penalty", "--frequency-penalty",
		"--dry-multiplier", "--dry-base", "--xtc-probability", "--xtc-threshold", "--top-nsigma", "--dynatemp-range", "--samplers", "--sampling-seq"},
		"not implemented; run samples with --temp, --top-k, --top-p, --repeat-penalty, --repeat-last-n and -s/--seed"},
	{"run", []string{"-i", "--interactive", "-if", "--interactive-first", "-cnv", "--conversation", "-no-cnv", "--no-conversation", "-sys", "--system-prompt",
		"-r", "--reverse-prompt", "--chat-template", "--jinja", "-st", "--single-turn"},
		"run is not interactive and applies no chat template; give the whole prompt with -p TEXT (or --ids)"},
	{"run", []string{"-e", "--escape", "--no-escape"}, "-p is used as given; write a newline with the shell ($'a\\nb')"},
	{"run perplexity", []string{"--no-warmup", "--warmup"}, "there is no warm-up run; drop it"},
	{"run perplexity bench embed tokenize verify", []string{"--log-disable", "--no-perf", "--verbose-prompt", "-no-display-prompt", "--no-display-prompt"},
		"logs and timings go to stderr; redirect it (2>/dev/null)"},
	{"perplexity", []string{"--hellaswag", "--hellaswag-tasks", "--winogrande", "--winogrande-tasks", "--multiple-choice", "--multiple-choice-tasks"},
		"only the perplexity and --kl-divergence are computed"},
	{"perplexity", []string{"--ppl-stride", "--ppl-output-type"}, "not implemented; chunks of -c tokens are scored as llama-perplexity does by default"},
	{"bench", []string{"-pg"}, "give the prompt and generation tests separately: -p N -n M"},
	{"bench", []string{"--progress", "-d", "--n-depth"}, "not implemented; bench runs ppN and tgN on an empty context"},
	{"tokenize", []string{"--no-escape", "--no-parse-special"}, "-p is used as given and control-token text is split unless --parse-special; drop it"},
	{"requant", []string{"--allow-requantize"}, "requant always converts quantized files (keeping every ternary code); drop it"},
	{"requant", []string{"--leave-output-tensor"}, "the output head keeps its type unless --output-tensor-type is given; drop it"},
	{"requant", []string{"--pure"}, "requant converts the ternary projections only; --token-embedding-type and --output-tensor-type retype the others"},
	{"requant", []string{"--imatrix", "--include-weights", "--exclude-weights"}, "ternary types need no importance matrix; drop it"},
	{"requant", []string{"--keep-split"}, "requant reads and writes single-file GGUFs"},
	{"requant", []string{"--override-kv"}, "requant keeps the metadata; set general.* keys at conversion with hf2gguf --metadata FILE.toml"},
	{"hf2gguf", []string{"--use-temp-file", "--no-lazy"}, "hf2gguf always streams one tensor at a time; drop it"},
	{"hf2gguf", []string{"--bigendian"}, "only little-endian GGUF is written (as every runtime we target reads)"},
	{"hf2gguf", []string{"--split-max-tensors", "--split-max-size", "--no-tensor-first-split"}, "hf2gguf writes one GGUF file"},
	{"hf2gguf", []string{"--print-supported-models"}, "use --list-archs"},
	{"hf2gguf", []string{"--remote"}, "download the checkpoint first (huggingface-cli download ORG/NAME --local-dir DIR) and give DIR"},
}

// llamaFlagHint looks for a llama.cpp flag among args (before "--") that
// the command args run does not define but llamaFlags names, and returns
// "CMD FLAG: what to do" for the first, or "" when there is none. Main
// uses it to replace cobra's "unknown flag" (or, for a single-dash flag
// such as -ngl that pflag reads as -n gl, the bad-value error).
func llamaFlagHint(root *cobra.Command, args []string) string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root {
		return ""
	}
	name := cmd.Name()
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		flag, _, _ := strings.Cut(a, "=")
		if defined(cmd, flag) {
			continue
		}
		for _, lf := range llamaFlags {
			if !containsWord(lf.cmds, name) {
				continue
			}
			for _, f := range lf.flags {
				if f == flag {
					return name + " " + flag + ": " + lf.hint
				}
			}
		}
	}
	return ""
}

// defined reports whether flag (as typed: --name, or -x for a shorthand)
// is a flag of cmd.
func defined(cmd *cobra.Command, flag string) bool {
	fs := cmd.Flags()
	if n, ok := strings.CutPrefix(flag, "--"); ok {
		return fs.Lookup(n) != nil
	}
	n := strings.TrimPrefix(flag, "-")
	return len(n) == 1 && fs.ShorthandLookup(n) != nil
}

func containsWord(list, w string) bool {
	for _, x := range strings.Fields(list) {
		if x == w {
			return true
		}
	}
	return false
}

// llamaSingleDash maps, per command, llama.cpp's multi-letter single-dash
// spellings of flags the command has under a long name; pflag would read
// -ub as the shorthands -u -b.
var llamaSingleDash = map[string]map[string]string{
	"perplexity": {"-ub": "--ubatch-size"},
}

// llamaLongSpellings returns args with the llamaSingleDash spellings of
// the command args run (before "--", as FLAG or FLAG=VALUE) replaced by
// their long names.
func llamaLongSpellings(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil {
		return args
	}
	m := llamaSingleDash[cmd.Name()]
	if m == nil {
		return args
	}
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		flag, val, hasVal := strings.Cut(a, "=")
		if long, ok := m[flag]; ok {
			out[i] = long
			if hasVal {
				out[i] += "=" + val
			}
		}
	}
	return out
}
