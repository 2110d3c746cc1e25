package convert

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/hf"
)

// BenchmarkConvert2B4TOuttypes converts the full-size dummy
// BitNet-b1.58-2B-4T (packed, 1.18 GB) to each new outtype into io.Discard
// and reports input MB/s (issue 11 acceptance e; the per-outtype peak RSS is
// measured process by process with /usr/bin/time -v by
// scripts/bench-ecosystems.sh, since VmHWM here covers every sub-benchmark).
func BenchmarkConvert2B4TOuttypes(b *testing.B) {
	dir := benchCheckpoint(b, "BitNet-b1.58-2B-4T", dummy.Options{Seed: 1})
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"tq1_0", Options{OutType: OutTQ1_0}},
		{"tq2_0", Options{OutType: OutTQ2_0}},
		{"iq1_bn", Options{OutType: OutIQ1BN}},
		{"iq2_bn", Options{OutType: OutIQ2BN}},
		{"i2_s-arm", Options{OutType: OutI2S, I2SLayout: format.LayoutARM}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ck, err := hf.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer ck.Close()
			var in int64
			for _, t := range ck.Tensors {
				in += int64(t.Size)
			}
			c.opts.NoVocab = true
			plan, err := NewPlan(ck, c.opts)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(in)
			b.ResetTimer()
			for b.Loop() {
				if err := Convert(context.Background(), ck, plan, io.Discard, c.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	if kb := peakRSSKB(); kb > 0 {
		b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
	}
}

// BenchmarkRequant2B4TToTQ2 requantizes the full-size 2B-4T I2_S file to
// TQ2_0 into the same directory and, in the same iteration, copies the file
// there as cp does (io.Copy between files); it reports the ratio
// requant/cp ("x-cp", acceptance e: at most 2) besides the time per requant.
// The I2_S input is made once with hf2gguf ($BITNET_BENCH_DIR reuses it).
func BenchmarkRequant2B4TToTQ2(b *testing.B) {
	dir := benchCheckpoint(b, "BitNet-b1.58-2B-4T", dummy.Options{Seed: 1})
	work := b.TempDir()
	if root := os.Getenv("BITNET_BENCH_DIR"); root != "" {
		work = filepath.Join(root, "requant")
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		b.Fatal(err)
	}
	in := filepath.Join(work, "2b4t-i2_s.gguf")
	if _, err := os.Stat(in); err != nil {
		if _, err := ConvertDir(context.Background(), dir, in, true, false, Options{NoVocab: true}); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(in)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	var cpTime, rqTime time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		t0 := time.Now()
		if err := copyFile(in, filepath.Join(work, "copy.gguf")); err != nil {
			b.Fatal(err)
		}
		cpTime += time.Since(t0)
		b.StartTimer()
		t1 := time.Now()
		if _, err := RequantFile(context.Background(), in, filepath.Join(work, "tq2_0.gguf"), true, false, RequantOptions{OutType: OutTQ2_0}); err != nil {
			b.Fatal(err)
		}
		rqTime += time.Since(t1)
	}
	b.ReportMetric(rqTime.Seconds()/cpTime.Seconds(), "x-cp")
	b.ReportMetric(cpTime.Seconds()/float64(b.N), "cp-s")
	os.Remove(filepath.Join(work, "copy.gguf"))
	os.Remove(filepath.Join(work, "tq2_0.gguf"))
}

// copyFile copies src to dst (created or truncated) and syncs nothing, as
// cp does.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
