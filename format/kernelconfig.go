package format

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// KernelConfig renders kernel_config.ini exactly as bitnet.cpp's generators
// write it with Python's ConfigParser (spec codegen.md §3.1): one section
// "[Kernels_<i>]" per kernel in list order with the keys m, k, bm (= BM),
// bk (= BK), bmm (= bm), each "key = value\n", and a blank line after every
// section.
func KernelConfig(ks []Kernel) []byte {
	var b bytes.Buffer
	for i, k := range ks {
		fmt.Fprintf(&b, "[Kernels_%d]\nm = %d\nk = %d\nbm = %d\nbk = %d\nbmm = %d\n\n", i, k.M, k.K, k.BM, k.BK, k.Bm)
	}
	return b.Bytes()
}

// iniKeys maps the (lower-cased) ini keys to the Kernel field they set; note
// "bm" is BM and "bmm" is bm (quirk 11).
var iniKeys = map[string]func(*Kernel) *int{
	"m":   func(k *Kernel) *int { return &k.M },
	"k":   func(k *Kernel) *int { return &k.K },
	"bm":  func(k *Kernel) *int { return &k.BM },
	"bk":  func(k *Kernel) *int { return &k.BK },
	"bmm": func(k *Kernel) *int { return &k.Bm },
}

// ParseKernelConfig reads a kernel_config.ini (the format KernelConfig writes
// and the one Python's ConfigParser accepts for it): sections in file order,
// each with the keys m, k, bm, bk, bmm (case-insensitive, "=" or ":",
// surrounding spaces ignored; "#" and ";" comment lines and blank lines
// skipped; other keys ignored). "bm" becomes Kernel.BM and "bmm" Kernel.Bm.
// Errors (with the line number): text outside a section, a line that is not
// "key = value", a duplicate section or key, a value that is not a positive
// decimal integer, or a section missing one of the five keys. It does not
// check the tiling rules; call Validate for that.
func ParseKernelConfig(data []byte) ([]Kernel, error) {
	var (
		ks       []Kernel
		seenKeys map[string]bool
		sections = map[string]bool{}
		curName  string
		startLn  int
	)
	finish := func() error {
		if curName == "" {
			return nil
		}
		for _, key := range []string{"m", "k", "bm", "bk", "bmm"} {
			if !seenKeys[key] {
				return fmt.Errorf("kernel_config.ini line %d: section [%s] has no %q key", startLn, curName, key)
			}
		}
		return nil
	}
	lines := strings.Split(string(data), "\n")
	for i, raw := range lines {
		ln := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") || len(line) < 3 {
				return nil, fmt.Errorf("kernel_config.ini line %d: bad section header %q", ln, line)
			}
			if err := finish(); err != nil {
				return nil, err
			}
			curName = line[1 : len(line)-1]
			if sections[curName] {
				return nil, fmt.Errorf("kernel_config.ini line %d: duplicate section [%s]", ln, curName)
			}
			sections[curName] = true
			seenKeys = map[string]bool{}
			startLn = ln
			ks = append(ks, Kernel{})
			continue
		}
		if curName == "" {
			return nil, fmt.Errorf("kernel_config.ini line %d: %q is outside any section", ln, line)
		}
		sep := strings.IndexAny(line, "=:")
		if sep <= 0 {
			return nil, fmt.Errorf("kernel_config.ini line %d: want \"key = value\", got %q", ln, line)
		}
		key := strings.ToLower(strings.TrimSpace(line[:sep]))
		val := strings.TrimSpace(line[sep+1:])
		field, ok := iniKeys[key]
		if !ok {
			continue
		}
		if seenKeys[key] {
			return nil, fmt.Errorf("kernel_config.ini line %d: duplicate key %q in section [%s]", ln, key, curName)
		}
		seenKeys[key] = true
		n, err := strconv.Atoi(val)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("kernel_config.ini line %d: %s = %q is not a positive integer", ln, key, val)
		}
		*field(&ks[len(ks)-1]) = n
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(ks) == 0 {
		return nil, fmt.Errorf("kernel_config.ini: no kernel sections")
	}
	return ks, nil
}

// KernelConfigKey is the GGUF metadata key under which hf2gguf stores the
// kernel_config.ini text (KernelConfig's bytes) of a TL1/TL2 file. GGUF has
// no standard place for the tiling and a wrong one decodes to wrong weights,
// so our files carry it; bitnet.cpp ignores the key. Files from other tools
// lack it and need their kernel_config.ini given explicitly.
const KernelConfigKey = "bitnet_convert.kernel_config"
