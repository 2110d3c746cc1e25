package convert

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

// cutWriter accepts limit bytes, then fails every write.
type cutWriter struct{ limit int }

func (w *cutWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		return 0, errors.New("no space left on device")
	}
	w.limit -= len(p)
	return len(p), nil
}

// goroutinesSettle waits until the goroutine count is back to n (the writer
// goroutine must have exited), failing after a second.
func goroutinesSettle(t *testing.T, n int, what string) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > n; {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d goroutines left, %d before", what, runtime.NumGoroutine(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestConvertPipelineFailures: with the output written by its own goroutine
// (tensorWriter), a destination that fails after the header, in the middle
// of the tensors or at the last one, a damaged tensor in the middle and a
// cancellation all end Convert with the right error, and no goroutine is
// left behind.
func TestConvertPipelineFailures(t *testing.T) {
	ck, err := hf.Open(goldenHF)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	opts := Options{OutType: OutI2S, NoVocab: true}
	p, err := NewPlan(ck, opts)
	if err != nil {
		t.Fatal(err)
	}
	var full countWriter
	if err := Convert(context.Background(), ck, p, &full, opts); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	for _, limit := range []int{full.n / 100, full.n / 2, full.n - 1} {
		err := Convert(context.Background(), ck, p, &cutWriter{limit: limit}, opts)
		if err == nil || !strings.Contains(err.Error(), "no space left") || !strings.Contains(err.Error(), "tensor") {
			t.Errorf("failing after %d of %d bytes: %v", limit, full.n, err)
		}
		goroutinesSettle(t, before, "write failure")
	}

	_, refs, raw := goldenTensors(t)
	dir := copyGolden(t)
	var ts []hf.WriteTensor
	for _, r := range refs {
		b := raw[r.Name]
		if r.Name == "model.layers.1.post_attention_layernorm.weight" {
			b = append([]byte(nil), b...)
			b[10], b[11] = 0xc0, 0x7f // a NaN
		}
		ts = append(ts, hf.WriteTensor{Name: r.Name, DType: r.DType, Shape: r.Shape, Data: hf.RawData(b)})
	}
	if err := hf.WriteSafetensors(dir+"/model.safetensors", ts, nil); err != nil {
		t.Fatal(err)
	}
	ck2, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck2.Close()
	p2, err := NewPlan(ck2, opts)
	if err != nil {
		t.Fatal(err)
	}
	err = Convert(context.Background(), ck2, p2, io.Discard, opts)
	if err == nil || !strings.Contains(err.Error(), "model.layers.1.post_attention_layernorm.weight") || !strings.Contains(err.Error(), "element 5") {
		t.Errorf("damaged tensor: %v", err)
	}
	goroutinesSettle(t, before, "damaged tensor")

	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	copts := opts
	copts.Progress = func(done, total int, _ string) {
		if calls++; calls == 5 {
			cancel()
		}
	}
	if err := Convert(ctx, ck, p, io.Discard, copts); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	goroutinesSettle(t, before, "cancel")
}

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
