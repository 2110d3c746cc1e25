package convert_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bitnet-convert/bitnet-convert/convert"
)

// ExampleReadPooling reads the pooling of a sentence-transformers model
// directory: modules.json names the Pooling module, whose config.json turns
// last-token pooling on (GGUF pooling_type 3).
func ExampleReadPooling() {
	dir, _ := os.MkdirTemp("", "pooling")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "modules.json"), []byte(`[
  {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
  {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]`), 0o644)
	os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755)
	os.WriteFile(filepath.Join(dir, "1_Pooling", "config.json"), []byte(`{"pooling_mode_lasttoken": true}`), 0o644)
	pt, warnings, err := convert.ReadPooling(dir)
	fmt.Println(pt, len(warnings), err)
	// Output: 3 0 <nil>
}
