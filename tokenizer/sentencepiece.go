package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
)

// ErrSentencePiece marks a tokenizer.model that is not a usable SentencePiece
// ModelProto (bad protobuf wire data, empty or duplicate pieces, no <unk>).
// It is returned wrapped with the file name; test for it with errors.Is.
var ErrSentencePiece = errors.New("bad SentencePiece model")

// ErrVocabTooLarge is returned (wrapped, with both numbers) when a tokenizer
// has more tokens than config.json vocab_size allows.
var ErrVocabTooLarge = errors.New("tokenizer has more tokens than vocab_size")

// SentencePiece piece types (sentencepiece_model.proto
// ModelProto.SentencePiece.Type). They equal the GGUF token types of the same
// name, which is why llama.cpp's converter can copy them.
const (
	spNormal      = 1
	spUnknown     = 2
	spControl     = 3
	spUserDefined = 4
	spUnused      = 5
	spByte        = 6
)

// Protobuf field numbers of sentencepiece_model.proto that we read.
const (
	fieldModelPieces         = 1 // ModelProto.pieces (repeated SentencePiece)
	fieldModelTrainerSpec    = 2 // ModelProto.trainer_spec
	fieldModelNormalizerSpec = 3 // ModelProto.normalizer_spec
	fieldPiecePiece          = 1 // SentencePiece.piece (string)
	fieldPieceScore          = 2 // SentencePiece.score (float)
	fieldPieceType           = 3 // SentencePiece.type (enum, default NORMAL)
	fieldTrainerModelType    = 3 // TrainerSpec.model_type (UNIGRAM=1, BPE=2, WORD=3, CHAR=4)
	fieldTrainerByteFallback = 35
	fieldNormAddDummyPrefix  = 3 // NormalizerSpec.add_dummy_prefix (bool, default true)
)

// spPiece is one ModelProto.SentencePiece.
type spPiece struct {
	Piece string
	Score float32
	Type  int32
}

// spModel is the part of a SentencePiece ModelProto the converter and the
// tokenizer need.
type spModel struct {
	Pieces []spPiece
	// ModelType is TrainerSpec.model_type (0 when absent, 1 unigram, 2 BPE).
	ModelType int32
	// ByteFallback is TrainerSpec.byte_fallback.
	ByteFallback bool
	// AddDummyPrefix is NormalizerSpec.add_dummy_prefix (true when absent,
	// the proto default).
	AddDummyPrefix bool
}

// maxSentencePieces bounds the piece count of a tokenizer.model; no real
// model comes near it (Gemma has 262144) and it keeps hostile files from
// making us allocate without limit.
const maxSentencePieces = 1 << 24

// parseSentencePiece decodes a serialized ModelProto with protowire. Unknown
// fields are skipped, as protobuf requires. Errors wrap ErrSentencePiece and
// say which piece or field is bad; they never name the file (the caller adds
// it).
func parseSentencePiece(data []byte) (*spModel, error) {
	m := &spModel{AddDummyPrefix: true}
	err := spForEachField(data, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case fieldModelPieces:
			if typ != protowire.BytesType {
				return fmt.Errorf("ModelProto.pieces has wire type %d, want bytes", typ)
			}
			if len(m.Pieces) >= maxSentencePieces {
				return fmt.Errorf("more than %d pieces", maxSentencePieces)
			}
			p, err := parsePiece(v)
			if err != nil {
				return fmt.Errorf("piece %d: %w", len(m.Pieces), err)
			}
			m.Pieces = append(m.Pieces, p)
		case fieldModelTrainerSpec:
			if typ != protowire.BytesType {
				return fmt.Errorf("ModelProto.trainer_spec has wire type %d, want bytes", typ)
			}
			return spForEachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				switch {
				case num == fieldTrainerModelType && typ == protowire.VarintType:
					m.ModelType = int32(x)
				case num == fieldTrainerByteFallback && typ == protowire.VarintType:
					m.ByteFallback = x != 0
				}
				return nil
			})
		case fieldModelNormalizerSpec:
			if typ != protowire.BytesType {
				return fmt.Errorf("ModelProto.normalizer_spec has wire type %d, want bytes", typ)
			}
			return spForEachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				if num == fieldNormAddDummyPrefix {
					if typ != protowire.VarintType {
						return fmt.Errorf("NormalizerSpec.add_dummy_prefix has wire type %d, want varint", typ)
					}
					m.AddDummyPrefix = x != 0
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSentencePiece, err)
	}
	if len(m.Pieces) == 0 {
		return nil, fmt.Errorf("%w: no pieces", ErrSentencePiece)
	}
	// The checks sentencepiece's ModelInterface::InitializePieces makes when
	// it loads a model: no empty or duplicate pieces, exactly one <unk>.
	seen := make(map[string]int, len(m.Pieces))
	unk := -1
	for i, p := range m.Pieces {
		if p.Piece == "" {
			return nil, fmt.Errorf("%w: piece %d is empty", ErrSentencePiece, i)
		}
		if j, dup := seen[p.Piece]; dup {
			return nil, fmt.Errorf("%w: piece %d %q duplicates piece %d", ErrSentencePiece, i, p.Piece, j)
		}
		seen[p.Piece] = i
		if p.Type == spUnknown {
			if unk >= 0 {
				return nil, fmt.Errorf("%w: pieces %d and %d are both UNKNOWN", ErrSentencePiece, unk, i)
			}
			unk = i
		}
	}
	if unk < 0 {
		return nil, fmt.Errorf("%w: no UNKNOWN (<unk>) piece", ErrSentencePiece)
	}
	return m, nil
}

// parsePiece decodes one ModelProto.SentencePiece message.
func parsePiece(data []byte) (spPiece, error) {
	p := spPiece{Type: spNormal}
	havePiece := false
	err := spForEachField(data, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case fieldPiecePiece:
			if typ != protowire.BytesType {
				return fmt.Errorf("piece has wire type %d, want bytes", typ)
			}
			if !utf8.Valid(v) {
				return fmt.Errorf("piece %q is not valid UTF-8", v)
			}
			p.Piece = string(v)
			havePiece = true
		case fieldPieceScore:
			if typ != protowire.Fixed32Type {
				return fmt.Errorf("score has wire type %d, want fixed32", typ)
			}
			p.Score = math.Float32frombits(uint32(x))
		case fieldPieceType:
			if typ != protowire.VarintType {
				return fmt.Errorf("type has wire type %d, want varint", typ)
			}
			p.Type = int32(x)
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	if !havePiece {
		return p, errors.New("piece field missing")
	}
	return p, nil
}

// spForEachField walks the top-level fields of a protobuf message. For bytes
// fields v is the payload; for varint, fixed32 and fixed64 fields x is the
// value. Groups are skipped.
func spForEachField(data []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return fmt.Errorf("bad field tag: %w", protowire.ParseError(n))
		}
		data = data[n:]
		var (
			v []byte
			x uint64
		)
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(data)
		case protowire.Fixed32Type:
			var u uint32
			u, n = protowire.ConsumeFixed32(data)
			x = uint64(u)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(data)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(data)
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		data = data[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// tokenTypeOfPiece maps a piece type to the GGUF token type the way
// bitnet.cpp's convert-hf-to-gguf-bitnet.py _set_vocab_sentencepiece does:
// is_unknown, is_control, is_unused, is_byte in that priority, else NORMAL.
// USER_DEFINED pieces therefore become NORMAL, as in the reference.
var tokenTypeOfPiece = map[int32]int32{
	spUnknown: TypeUnknown,
	spControl: TypeControl,
	spUnused:  TypeUnused,
	spByte:    TypeByte,
}

// LoadSentencePiece builds the GGUF vocabulary of a Hugging Face model
// directory that has a SentencePiece tokenizer.model, as bitnet.cpp's
// convert-hf-to-gguf-bitnet.py _set_vocab_sentencepiece plus gguf-py
// SpecialVocab do (spec conversion.md §5.3):
//
//   - tokens, scores and token types are the pieces of dir/tokenizer.model
//     (types: UNKNOWN, CONTROL, UNUSED, BYTE, else NORMAL);
//   - entries of dir/added_tokens.json whose text is not already a token are
//     appended in id order with score −1000 and type USER_DEFINED;
//   - the list is padded to vocabSize with "[PAD1]" … "[PADn]" (n counts the
//     padding tokens, not token ids), score −1000, type UNUSED;
//   - special ids, add_bos/add_eos and the chat template come from
//     ApplySpecialVocab (tokenizer.json added_tokens, tokenizer_config.json,
//     config.json).
//
// vocabSize is config.json vocab_size; 0 or less means "the tokenizer's own
// size". The Vocab has Model "llama" and Pre "default". AddSpacePrefix is
// left nil (the reference writes no add_space_prefix key) unless the model's
// normalizer turns add_dummy_prefix off, in which case it is false and a
// warning says so.
//
// Errors name the file: a missing or malformed tokenizer.model (wrapping
// ErrSentencePiece), bad JSON in a side file, or more tokens than vocabSize
// (wrapping ErrVocabTooLarge). Warnings are one line each, for things the
// converter tolerated.
func LoadSentencePiece(dir string, vocabSize int) (*Vocab, []string, error) {
	return loadSentencePiece(dirFiles(dir), vocabSize)
}

// LoadSentencePieceFS is LoadSentencePiece reading the model files from the
// root of fsys (an os.DirFS, an fstest.MapFS, …); errors name the files
// relative to that root.
func LoadSentencePieceFS(fsys fs.FS, vocabSize int) (*Vocab, []string, error) {
	return loadSentencePiece(modelFiles{fsys: fsys}, vocabSize)
}

func loadSentencePiece(files modelFiles, vocabSize int) (*Vocab, []string, error) {
	data, path, err := files.read("tokenizer.model")
	if err != nil {
		return nil, nil, fmt.Errorf("read SentencePiece model %s: %w", path, err)
	}
	m, err := parseSentencePiece(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	v, warnings, err := vocabFromSentencePiece(m, files, vocabSize)
	if err != nil {
		return nil, nil, err
	}
	w, err := applySpecialVocab(v, files)
	if err != nil {
		return nil, nil, err
	}
	return v, append(warnings, w...), nil
}

// modelFiles reads the files of one model directory from fsys; dir, when
// set, prefixes the names in errors and warnings.
type modelFiles struct {
	fsys fs.FS
	dir  string
}

// dirFiles returns the modelFiles of an operating-system directory.
func dirFiles(dir string) modelFiles {
	if dir == "" {
		dir = "."
	}
	return modelFiles{fsys: os.DirFS(dir), dir: dir}
}

// path is how errors name file name.
func (f modelFiles) path(name string) string {
	if f.dir == "" {
		return name
	}
	return filepath.Join(f.dir, name)
}

// read returns the content of file name and the path to name it by.
func (f modelFiles) read(name string) ([]byte, string, error) {
	data, err := fsutil.ReadFileFS(f.fsys, name)
	return data, f.path(name), err
}

// vocabFromSentencePiece does the token list part of LoadSentencePiece.
func vocabFromSentencePiece(m *spModel, files modelFiles, vocabSize int) (*Vocab, []string, error) {
	var warnings []string
	v := NewVocab("llama", "default")
	n := len(m.Pieces)
	v.Tokens = make([]string, 0, max(n, vocabSize))
	v.Scores = make([]float32, 0, max(n, vocabSize))
	v.Types = make([]int32, 0, max(n, vocabSize))
	index := make(map[string]bool, n)
	for _, p := range m.Pieces {
		t, ok := tokenTypeOfPiece[p.Type]
		if !ok {
			t = TypeNormal
		}
		v.Tokens = append(v.Tokens, p.Piece)
		v.Scores = append(v.Scores, p.Score)
		v.Types = append(v.Types, t)
		index[p.Piece] = true
	}

	added, err := readAddedTokensJSON(files)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range added {
		if index[a.text] {
			continue
		}
		if a.id != len(v.Tokens) {
			warnings = append(warnings, fmt.Sprintf("added_tokens.json: %q has id %d but is appended at id %d (as the reference converter does)", a.text, a.id, len(v.Tokens)))
		}
		v.Tokens = append(v.Tokens, a.text)
		v.Scores = append(v.Scores, -1000)
		v.Types = append(v.Types, TypeUserDefined)
		index[a.text] = true
	}

	if vocabSize <= 0 {
		vocabSize = len(v.Tokens)
	}
	if len(v.Tokens) > vocabSize {
		return nil, nil, fmt.Errorf("%s: %w: %d tokens (%d pieces + %d from added_tokens.json) but config.json vocab_size is %d; fix vocab_size",
			files.path("tokenizer.model"), ErrVocabTooLarge, len(v.Tokens), n, len(v.Tokens)-n, vocabSize)
	}
	if pad := vocabSize - len(v.Tokens); pad > 0 {
		for i := 1; i <= pad; i++ {
			v.Tokens = append(v.Tokens, fmt.Sprintf("[PAD%d]", i))
			v.Scores = append(v.Scores, -1000)
			v.Types = append(v.Types, TypeUnused)
		}
		warnings = append(warnings, fmt.Sprintf("tokenizer.model: padded the vocabulary with %d tokens [PAD1]…[PAD%d] up to vocab_size %d", pad, pad, vocabSize))
	}
	if !m.AddDummyPrefix {
		f := false
		v.AddSpacePrefix = &f
		warnings = append(warnings, "tokenizer.model: normalizer add_dummy_prefix is false; writing tokenizer.ggml.add_space_prefix = false (the reference converter omits it)")
	}
	return v, warnings, nil
}

// spAddedToken is one added_tokens.json entry.
type spAddedToken struct {
	text string
	id   int
}

// readAddedTokensJSON reads a {"text": id, …} file; a missing file is no
// tokens. Entries are returned in id order (ties by text).
func readAddedTokensJSON(files modelFiles) ([]spAddedToken, error) {
	data, path, err := files.read("added_tokens.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read added tokens %s: %w", path, err)
	}
	var raw map[string]int
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: want a JSON object of token text to integer id: %w", path, err)
	}
	out := make([]spAddedToken, 0, len(raw))
	for k, id := range raw {
		if id < 0 {
			return nil, fmt.Errorf("%s: token %q has negative id %d", path, k, id)
		}
		out = append(out, spAddedToken{k, id})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].id != out[j].id {
			return out[i].id < out[j].id
		}
		return out[i].text < out[j].text
	})
	return out, nil
}
