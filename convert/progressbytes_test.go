package convert

import (
	"context"
	"io"
	"path/filepath"
	"testing"
)

// TestProgressBytes (H30): the byte hooks of hf2gguf's and requant's
// conversions report the output bytes written so far, tensor by tensor,
// rising to the plan's total, so a bar moves with the data (the tiny
// model's token_embd is 1 of 24 tensors but a quarter of the bytes).
func TestProgressBytes(t *testing.T) {
	type call struct {
		done, total uint64
		name        string
	}
	check := func(what string, calls []call, tensors int, total uint64) {
		t.Helper()
		if len(calls) != tensors {
			t.Fatalf("%s: %d calls for %d tensors", what, len(calls), tensors)
		}
		var prev uint64
		for _, c := range calls {
			if c.total != total || c.done <= prev || c.done > total {
				t.Fatalf("%s: call %+v after %d, total %d", what, c, prev, total)
			}
			prev = c.done
		}
		if prev != total {
			t.Errorf("%s: ends at %d of %d bytes", what, prev, total)
		}
		if first := calls[0]; first.name != "token_embd.weight" || first.done*8 < total {
			t.Errorf("%s: first call %+v of %d bytes: token_embd should be at least 1/8 of the data", what, first, total)
		}
	}
	var calls []call
	out := filepath.Join(t.TempDir(), "tiny.gguf")
	plan, err := ConvertDir(context.Background(), "../testdata/golden/tiny-bitnet/hf", out, false, false, Options{OutType: "i2_s",
		ProgressBytes: func(done, total uint64, name string) { calls = append(calls, call{done, total, name}) }})
	if err != nil {
		t.Fatal(err)
	}
	check("hf2gguf", calls, len(plan.Tensors), plan.TotalBytes())

	calls = nil
	rplan, err := RequantFile(context.Background(), out, filepath.Join(t.TempDir(), "tq.gguf"), false, false, RequantOptions{OutType: "tq2_0", Log: io.Discard,
		ProgressBytes: func(done, total uint64, name string) { calls = append(calls, call{done, total, name}) }})
	if err != nil {
		t.Fatal(err)
	}
	check("requant", calls, len(rplan.Tensors), rplan.TotalBytes())
}
