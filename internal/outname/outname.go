// Package outname decides where a command writes its GGUF file: the default
// model name of a checkpoint directory (Hugging Face hub cache snapshots
// included), a file-name-safe stem of a model name, the --outfile rules of
// llama.cpp's convert_hf_to_gguf.py (a directory gets the default name; a
// file name may hold the {ftype}/{outtype} template) and the checks --dry-run
// makes so it predicts the real run. hf2gguf and requant share it.
package outname

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultStem is the file stem used when a model name sanitises to nothing,
// as convert_hf_to_gguf.py's gguf.naming_convention falls back to
// "ggml-model".
const DefaultStem = "ggml-model"

// maxStemBytes keeps generated names well below the 255-byte name limit of
// common file systems, leaving room for "-<outtype>.gguf".
const maxStemBytes = 200

// ModelName returns the default general.name of the checkpoint directory dir:
// its base name, except for a Hugging Face hub cache snapshot
// (…/models--ORG--NAME/snapshots/REV), where it is NAME, the repository's
// name, rather than the revision hash.
func ModelName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	if repo, ok := HubRepo(abs); ok {
		if i := strings.LastIndexByte(repo, '/'); i >= 0 {
			return repo[i+1:]
		}
		return repo
	}
	return filepath.Base(abs)
}

// HubRepo reports the repository id ("org/name", or "name" for a repository
// without an owner) of a Hugging Face hub cache snapshot directory
// <cache>/models--org--name/snapshots/<rev>. The hub cache encodes "/" in a
// repo id as "--" (huggingface_hub's repo_folder_name).
func HubRepo(dir string) (string, bool) {
	dir = filepath.Clean(dir)
	snaps := filepath.Dir(dir)
	if filepath.Base(snaps) != "snapshots" || filepath.Base(dir) == "snapshots" {
		return "", false
	}
	folder := filepath.Base(filepath.Dir(snaps))
	rest, ok := strings.CutPrefix(folder, "models--")
	if !ok || rest == "" {
		return "", false
	}
	return strings.ReplaceAll(rest, "--", "/"), true
}

// Stem turns a model name into a file-name stem that cannot leave the output
// directory: path separators and white space become "-" (as
// convert_hf_to_gguf.py's naming_convention replaces "/" and " "), control
// characters and the characters Windows forbids in names (<>:"|?*) become "-"
// too, runs of "-" collapse, leading dots and dashes and trailing dots and
// dashes are dropped, and the result is cut to 200 bytes (at a rune
// boundary). A name that leaves nothing gives DefaultStem. general.name
// itself keeps the name verbatim; only the file name is sanitised.
func Stem(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		bad := r == '/' || r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(`<>:"|?*`, r) || r == utf8.RuneError
		if bad {
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
			continue
		}
		if r == '-' {
			if dash || b.Len() == 0 {
				continue
			}
			dash = true
		} else {
			dash = false
		}
		if b.Len()+utf8.RuneLen(r) > maxStemBytes {
			break
		}
		b.WriteRune(r)
	}
	s := strings.TrimLeft(b.String(), ".-")
	s = strings.TrimRight(s, ".-")
	if s == "" {
		return DefaultStem
	}
	return s
}

// Request says what Resolve needs: the --outfile value (may be ""), the model
// name the default file name derives from, the output type written in the
// name and substituted in templates (e.g. "i2_s"), and Suffix, which replaces
// "-<outtype>" in the default name when set (hf2gguf --vocab-only uses
// "vocab", as convert_hf_to_gguf.py names vocab files <name>-vocab.gguf).
type Request struct {
	OutFile   string
	ModelName string
	OutType   string
	Suffix    string
}

// DefaultFile is the default file name: <stem>-<outtype>.gguf, or
// <stem>-<suffix>.gguf when Suffix is set.
func (r Request) DefaultFile() string {
	tail := r.OutType
	if r.Suffix != "" {
		tail = r.Suffix
	}
	return Stem(r.ModelName) + "-" + tail + ".gguf"
}

// Resolve returns the output path for r, following convert_hf_to_gguf.py:
//   - no --outfile: DefaultFile in the current directory;
//   - --outfile naming an existing directory, or ending in a path separator:
//     DefaultFile inside it (a missing directory is an error naming it);
//   - otherwise the file name (not its directory) is a template: {ftype} and
//     {outtype} (and {} ) become the output type in lower case, {FTYPE} and
//     {OUTTYPE} in upper case, {{ and }} a literal brace; any other field is
//     an error.
//
// Errors are one line naming --outfile.
func Resolve(r Request) (string, error) {
	if r.OutFile == "" {
		return "." + string(filepath.Separator) + r.DefaultFile(), nil
	}
	trailing := strings.HasSuffix(r.OutFile, "/") || strings.HasSuffix(r.OutFile, string(filepath.Separator))
	fi, err := os.Stat(r.OutFile)
	switch {
	case err == nil && fi.IsDir():
		return filepath.Join(r.OutFile, r.DefaultFile()), nil
	case trailing && errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("--outfile %s: directory %s does not exist; create it first", r.OutFile, filepath.Clean(r.OutFile))
	case trailing && err == nil:
		return "", fmt.Errorf("--outfile %s: %s is not a directory", r.OutFile, filepath.Clean(r.OutFile))
	}
	dir, base := filepath.Split(r.OutFile)
	filled, err := Fill(base, r.OutType)
	if err != nil {
		return "", fmt.Errorf("--outfile %s: %w", r.OutFile, err)
	}
	if filled == "" {
		return "", fmt.Errorf("--outfile %s: the template gives an empty file name", r.OutFile)
	}
	return dir + filled, nil
}

// Fill substitutes the output-type fields of a file-name template as
// convert_hf_to_gguf.py's gguf.fill_templated_filename does (Python
// str.format with {ftype}, {outtype}, {FTYPE}, {OUTTYPE} and one positional
// {}); "{{" and "}}" are literal braces. An unknown field or an unbalanced
// brace is an error naming it.
func Fill(name, outType string) (string, error) {
	lower, upper := strings.ToLower(outType), strings.ToUpper(outType)
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '{' && i+1 < len(name) && name[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(name) && name[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '}':
			return "", fmt.Errorf("single '}' in the file name template (write }} for a literal brace)")
		case c == '{':
			end := strings.IndexByte(name[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("unclosed '{' in the file name template (write {{ for a literal brace)")
			}
			field := name[i+1 : i+end]
			switch field {
			case "", "0", "ftype", "outtype":
				b.WriteString(lower)
			case "FTYPE", "OUTTYPE":
				b.WriteString(upper)
			default:
				return "", fmt.Errorf("unknown template field {%s} (known: {ftype}, {outtype}, {FTYPE}, {OUTTYPE}, {})", field)
			}
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// ErrExists is wrapped by Check's error for an existing output without
// force; the message names the way out, like the real run's.
var ErrExists = errors.New("output file exists (use --force to overwrite)")

// Check makes the checks the real run makes before writing path, so that
// --dry-run predicts its outcome: the directory must exist and be a
// directory; path must not be a directory or a non-regular file; an existing
// path needs force; the directory must accept a new file (probed by
// creating and removing an empty hidden file: a read-only filesystem
// passed before, defect H19). It leaves nothing behind.
func Check(path string, force bool) error {
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("output %s: directory %s does not exist; create it first", path, dir)
	case err != nil:
		return fmt.Errorf("output %s: %w", path, err)
	case !di.IsDir():
		return fmt.Errorf("output %s: %s is not a directory", path, dir)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			return fmt.Errorf("output %s is a symbolic link that leads nowhere; give a file path", path)
		}
		return probeDir(path, dir)
	case err != nil:
		return fmt.Errorf("output %s: %w", path, err)
	case fi.IsDir():
		return fmt.Errorf("output %s is a directory; give a file path", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("output %s is not a regular file (%s); give a file path", path, fi.Mode().Type())
	case !force:
		return fmt.Errorf("%s: %w", path, ErrExists)
	}
	return probeDir(path, dir)
}

// probeDir creates and removes an empty file in dir; the error names the
// output path and the cause, as the real run's "create output" error does.
func probeDir(path, dir string) error {
	f, err := os.CreateTemp(dir, ".bitnet-convert-probe-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("create output %s: %w", path, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
