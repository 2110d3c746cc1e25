package runtime

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// checkLayerCount compares {arch}.block_count with the blk.N. tensors of the
// file before anything is allocated per layer: a block_count of 2^30 in a
// two-layer file must be one error line, not a 160 GB allocation (defect D3).
// It returns an error naming the key and the first layer with no tensor.
func checkLayerCount(arch string, tensors []gguf.TensorInfo, nLayer int) error {
	have := make(map[int]bool)
	for _, ti := range tensors {
		rest, ok := strings.CutPrefix(ti.Name, "blk.")
		if !ok {
			continue
		}
		num, _, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		if i, err := strconv.Atoi(num); err == nil && i >= 0 {
			have[i] = true
		}
	}
	if nLayer <= len(have) {
		// Every layer below nLayer still needs its tensors; Load names
		// the first missing one.
		return nil
	}
	first := 0
	for have[first] {
		first++
	}
	return fmt.Errorf("key %s.block_count %d: the file has tensors for %d layer(s), none for layer %d (blk.%d.*); fix the key or the file", arch, nLayer, len(have), first, first)
}
