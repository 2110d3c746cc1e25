package runtime

import (
	"math"
	"strings"
	"testing"
)

// TestFiniteRecordDamagedBase (H14): a base record whose min or scale is
// finite but no log-probability (1e30: the largest log-probability above
// 0) is the damaged base file's fault; it gave a mean KLD of +Inf blamed
// on the model.
func TestFiniteRecordDamagedBase(t *testing.T) {
	row := make([]uint16, 8)
	putF32Words(row[0:2], 1e-3)
	putF32Words(row[2:4], -70)
	if err := finiteRecord(row); err != nil {
		t.Fatalf("a good record: %v", err)
	}
	for _, c := range []struct{ scale, min float32 }{{1e-3, 1e30}, {1e30, -70}, {-1, -70}} {
		putF32Words(row[0:2], c.scale)
		putF32Words(row[2:4], c.min)
		if err := finiteRecord(row); err == nil || !strings.Contains(err.Error(), "log-probabilit") {
			t.Errorf("scale %v min %v: %v", c.scale, c.min, err)
		}
	}
	putF32Words(row[2:4], float32(math.NaN()))
	if err := finiteRecord(row); err == nil {
		t.Error("NaN min accepted")
	}
}
