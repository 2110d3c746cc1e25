package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/clitest"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

const tiny = "../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"

func TestNewCmdBench(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    *BenchOptions
		wantErr string
	}{
		{"defaults", []string{"-m", "x.gguf"}, &BenchOptions{Model: "x.gguf", Prompt: []int{128}, Gen: []int{32}, Threads: []int{0}, Reps: 5, Output: "md"}, ""},
		{"all", []string{"-m", "x.gguf", "-p", "64,0", "-n", "16", "-t", "1,2", "-r", "3", "--json"}, &BenchOptions{Model: "x.gguf", Prompt: []int{64, 0}, Gen: []int{16}, Threads: []int{1, 2}, Reps: 3, Output: "json"}, ""},
		{"long names", []string{"--model", "x.gguf", "--n-prompt", "8", "--n-gen", "0", "--threads", "2", "--repetitions", "1"}, &BenchOptions{Model: "x.gguf", Prompt: []int{8}, Gen: []int{0}, Threads: []int{2}, Reps: 1, Output: "md"}, ""},
		{"no model", []string{"-p", "8"}, nil, "-m/--model"},
		{"arg", []string{"-m", "x", "extra"}, nil, "no arguments"},
		{"bad list", []string{"-m", "x", "-t", "1,two"}, nil, `-t/--threads "1,two"`},
		{"negative threads", []string{"-m", "x", "-t", "-1"}, nil, "-t/--threads -1"},
		{"negative prompt", []string{"-m", "x", "-p", "-4"}, nil, "-p/--n-prompt -4"},
		{"empty gen", []string{"-m", "x", "-n", ""}, nil, "-n/--n-gen"},
		{"zero reps", []string{"-m", "x", "-r", "0"}, nil, "-r/--repetitions 0"},
		{"no test", []string{"-m", "x", "-p", "0", "-n", "0"}, nil, "-p/--n-prompt 0 -n/--n-gen 0: no test to run"},
		{"no test, lists", []string{"-m", "x", "-p", "0,0", "-n", "0"}, nil, "no test to run"},
		{"layout", []string{"-m", "x", "--from-layout", "arm"}, &BenchOptions{Model: "x", Prompt: []int{128}, Gen: []int{32}, Threads: []int{0}, Reps: 5, Output: "md", FromLayout: "arm"}, ""},
		{"bad layout", []string{"-m", "x", "--from-layout", "mips"}, nil, "--from-layout"},
		// llama-bench's -o (Deliver 2 of issue 24).
		{"-o json", []string{"-m", "x", "-o", "json"}, &BenchOptions{Model: "x", Prompt: []int{128}, Gen: []int{32}, Threads: []int{0}, Reps: 5, Output: "json"}, ""},
		{"-o csv", []string{"-m", "x", "-o", "csv"}, &BenchOptions{Model: "x", Prompt: []int{128}, Gen: []int{32}, Threads: []int{0}, Reps: 5, Output: "csv"}, ""},
		{"--output md", []string{"-m", "x", "--output", "md"}, &BenchOptions{Model: "x", Prompt: []int{128}, Gen: []int{32}, Threads: []int{0}, Reps: 5, Output: "md"}, ""},
		{"-o json --json", []string{"-m", "x", "-o", "json", "--json"}, &BenchOptions{Model: "x", Prompt: []int{128}, Gen: []int{32}, Threads: []int{0}, Reps: 5, Output: "json"}, ""},
		{"-o csv --json", []string{"-m", "x", "-o", "csv", "--json"}, nil, "--json and -o csv exclude each other"},
		{"-o sql", []string{"-m", "x", "-o", "sql"}, nil, "-o sql: not implemented; use -o csv or -o json"},
		{"-o xml", []string{"-m", "x", "-o", "xml"}, nil, "want md, json or csv"},
		{"model given positionally", []string{"x.gguf"}, nil, "give it as -m x.gguf"},
		{"arith", []string{"-m", "x", "--arith", "ik"}, &BenchOptions{Model: "x", Prompt: []int{128}, Gen: []int{32}, Threads: []int{0}, Reps: 5, Output: "md", Arith: "ik"}, ""},
		{"bad arith", []string{"-m", "x", "--arith", "gpu"}, nil, "--arith"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := clitest.Parse(NewCmdBench, c.args)
			if c.wantErr != "" {
				clitest.WantUsage(t, err, c.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Out, got.Err = nil, nil
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("options\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestBenchTable: the markdown table of llama-bench on the tiny I2_S model
// (24 tensors of 1 313 536 elements, 568 768 bytes of data): header,
// alignment row, one row per (threads, test) in llama-bench's order, every
// cell at its column width, and the build footer.
func TestBenchTable(t *testing.T) {
	var out bytes.Buffer
	err := benchRun(&BenchOptions{Model: tiny, Prompt: []int{8}, Gen: []int{4}, Threads: []int{1, 2}, Reps: 2, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	want := []string{
		"| model                          |       size |     params | backend    | threads |          test |                  t/s |",
		"| ------------------------------ | ---------: | ---------: | ---------- | ------: | ------------: | -------------------: |",
	}
	if len(lines) < 8 || lines[0] != want[0] || lines[1] != want[1] {
		t.Fatalf("header:\n%s", out.String())
	}
	row := regexp.MustCompile(`^\| bitnet \?B I2_S - 2 bpw ternary \|   0\.54 MiB \|     1\.31 M \| CPU        \|       ([12]) \| +(pp8|tg4) \| +[0-9]+\.[0-9]{2} ± [0-9]+\.[0-9]{2} \|$`)
	var got []string
	for _, l := range lines[2:6] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("row %q does not have llama-bench's shape", l)
		}
		if len(l) != len(want[0])+1 { // "±" is two bytes
			t.Errorf("row %q: %d bytes, want %d", l, len(l), len(want[0])+1)
		}
		got = append(got, m[1]+" "+m[2])
	}
	if w := []string{"1 pp8", "1 tg4", "2 pp8", "2 tg4"}; !reflect.DeepEqual(got, w) {
		t.Errorf("rows %q, want %q", got, w)
	}
	if lines[6] != "" || !strings.HasPrefix(lines[7], "build: ") || !strings.Contains(lines[7], "kernels: ") {
		t.Errorf("footer %q %q", lines[6], lines[7])
	}
}

// TestBenchJSON: --json gives one object per test with -r samples, the
// speeds the token count over the sample times, mean and sample standard
// deviation of those, and the model's size and parameters.
func TestBenchJSON(t *testing.T) {
	var out bytes.Buffer
	err := benchRun(&BenchOptions{Model: tiny, Prompt: []int{6, 0}, Gen: []int{3}, Threads: []int{1}, Reps: 3, Output: "json", Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	var rs []Result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(rs) != 2 || rs[0].Test() != "pp6" || rs[1].Test() != "tg3" {
		t.Fatalf("tests %+v", rs)
	}
	for _, r := range rs {
		if r.ModelSize != 568768 || r.ModelNParams != 1313536 || r.NThreads != 1 || r.Backends != "CPU" || r.ModelFilename != tiny {
			t.Errorf("%s: model fields %+v", r.Test(), r)
		}
		if len(r.SamplesNs) != 3 || len(r.SamplesTs) != 3 {
			t.Fatalf("%s: %d/%d samples, want 3", r.Test(), len(r.SamplesNs), len(r.SamplesTs))
		}
		var sum float64
		for i, ns := range r.SamplesNs {
			ts := float64(r.NPrompt+r.NGen) * 1e9 / float64(ns)
			if math.Abs(ts-r.SamplesTs[i]) > 1e-9*ts {
				t.Errorf("%s: sample %d: %v t/s for %d ns", r.Test(), i, r.SamplesTs[i], ns)
			}
			sum += r.SamplesTs[i]
		}
		if mean := sum / 3; math.Abs(mean-r.AvgTs) > 1e-9*mean {
			t.Errorf("%s: avg_ts %v, mean of samples %v", r.Test(), r.AvgTs, mean)
		}
	}
}

// TestFtypeName checks the model column's ftype names against the
// llama_model_ftype_name strings of llama.cpp (TQ1_0/TQ2_0) and ik_llama.cpp
// (IQ1_BN/IQ2_BN).
func TestFtypeName(t *testing.T) {
	for _, c := range []struct {
		ft   uint64
		want string
	}{
		{40, "I2_S - 2 bpw ternary"},
		{36, "TQ1_0 - 1.69 bpw ternary"},
		{37, "TQ2_0 - 2.06 bpw ternary"},
		{136, "IQ1_BN - 1.625 bpw Bitnet"},
		{137, "IQ2_BN - 2.00 bpw Bitnet"},
		{999, "ftype 999"},
	} {
		if got := ftypeName(c.ft); got != c.want {
			t.Errorf("ftypeName(%d) = %q, want %q", c.ft, got, c.want)
		}
	}
}

func TestMeanStdev(t *testing.T) {
	for _, c := range []struct {
		xs       []float64
		mean, sd float64
	}{
		{nil, 0, 0},
		{[]float64{5}, 5, 0},
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, math.Sqrt(32.0 / 7)},
	} {
		m, s := meanStdev(c.xs)
		if m != c.mean || math.Abs(s-c.sd) > 1e-12 {
			t.Errorf("meanStdev(%v) = %v, %v; want %v, %v", c.xs, m, s, c.mean, c.sd)
		}
	}
}

func TestBenchErrors(t *testing.T) {
	dir := t.TempDir()
	notGGUF := filepath.Join(dir, "x.gguf")
	if err := os.WriteFile(notGGUF, []byte("not a gguf file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	// the golden F32 model with token_embd element 0 NaN: logit 0 of the
	// tied head is NaN at every position, which bench must not time
	f32 := filepath.Join(filepath.Dir(tiny), "ggml-model-f32.gguf")
	f, err := reader.Open(f32)
	if err != nil {
		t.Fatal(err)
	}
	ti, _ := f.Tensor("token_embd.weight")
	at := f.DataOffset + ti.Offset
	f.Close()
	b, err := os.ReadFile(f32)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[at:], 0x7fc00000)
	nan := filepath.Join(dir, "nan.gguf")
	if err := os.WriteFile(nan, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		opts    BenchOptions
		want    string
		isUsage bool
	}{
		{"missing", BenchOptions{Model: filepath.Join(dir, "none.gguf")}, "-m/--model", false},
		{"directory", BenchOptions{Model: dir}, "-m/--model", false},
		{"not gguf", BenchOptions{Model: notGGUF}, "x.gguf", false},
		{"context", BenchOptions{Model: tiny, Prompt: []int{1 << 20}}, "exceed the context length", true},
		{"kernel config", BenchOptions{Model: tiny, KernelConfig: filepath.Join(dir, "none.ini")}, "--kernel-config", false},
		{"NaN logits, pp", BenchOptions{Model: nan}, "model " + nan + ": pp4: logits at position 3 are not finite (logit 0 is NaN)", false},
		{"NaN logits, tg", BenchOptions{Model: nan, Prompt: []int{0}, Gen: []int{2}}, "model " + nan + ": tg2: logits at position 0 are not finite (logit 0 is NaN)", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			o.Threads, o.Reps, o.Out = []int{1}, 1, &bytes.Buffer{}
			if o.Prompt == nil {
				o.Prompt = []int{4}
			}
			err := benchRun(&o)
			var ue *usage.Error
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &ue) != c.isUsage || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line containing %q (usage %v)", err, c.want, c.isUsage)
			}
		})
	}
}

// TestBenchCSV: -o csv prints a quoted header of llama-bench's field names
// and one quoted line per test with the values of -o json.
func TestBenchCSV(t *testing.T) {
	var out bytes.Buffer
	err := benchRun(&BenchOptions{Model: tiny, Prompt: []int{4}, Gen: []int{2}, Threads: []int{1}, Reps: 1, Output: "csv", Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want header + 2:\n%s", len(lines), out.String())
	}
	if want := `"model_filename","model_type","model_size","model_n_params","backends","kernels","n_threads","use_mmap","n_prompt","n_gen","test_time","avg_ns","stddev_ns","avg_ts","stddev_ts"`; lines[0] != want {
		t.Errorf("header\n%s\nwant\n%s", lines[0], want)
	}
	for i, want := range []string{`,"1","1","4","0",`, `,"1","1","0","2",`} {
		row := lines[i+1]
		if !strings.HasPrefix(row, `"`+tiny+`","bitnet ?B I2_S - 2 bpw ternary","568768","1313536","CPU",`) || !strings.Contains(row, want) {
			t.Errorf("row %d: %s", i+1, row)
		}
		if n := strings.Count(row, `","`); n != 14 {
			t.Errorf("row %d: %d separators, want 14: %s", i+1, n, row)
		}
	}
}

// TestBenchNoMmap: with --no-mmap the table gains llama-bench's mmap
// column (0) before the test, -o csv and -o json say use_mmap 0 / false;
// without it there is no such column and use_mmap is true.
func TestBenchNoMmap(t *testing.T) {
	run := func(noMmap bool, output string) string {
		var out bytes.Buffer
		err := benchRun(&BenchOptions{Model: tiny, Gen: []int{2}, Threads: []int{1}, Reps: 1, Output: output, Out: &out, NoMmap: noMmap})
		if err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	md := strings.Split(run(true, "md"), "\n")
	if !strings.HasSuffix(md[0], "| threads | mmap |          test |                  t/s |") || !strings.Contains(md[2], "|       1 |    0 |           tg2 |") {
		t.Errorf("--no-mmap table:\n%s\n%s\n%s", md[0], md[1], md[2])
	}
	if strings.Count(md[1], "|") != strings.Count(md[0], "|") || strings.Count(md[2], "|") != strings.Count(md[0], "|") {
		t.Errorf("--no-mmap table columns differ:\n%s\n%s\n%s", md[0], md[1], md[2])
	}
	if md := run(false, "md"); strings.Contains(md, "mmap") {
		t.Errorf("mapped table has an mmap column:\n%s", md)
	}
	if csv := run(true, "csv"); !strings.Contains(csv, `,"1","0","0","2",`) {
		t.Errorf("--no-mmap csv:\n%s", csv)
	}
	if js := run(true, "json"); !strings.Contains(js, `"use_mmap": false`) {
		t.Errorf("--no-mmap json:\n%s", js)
	}
	if js := run(false, "json"); !strings.Contains(js, `"use_mmap": true`) {
		t.Errorf("mapped json:\n%s", js)
	}
}

// TestBenchLabelsFallback (H34): a file requantized with --allow-fallback
// (the tiny model as IQ2_BN: 12 of its 14 projections are too short for
// IQ2_BN and are written as F16) is labelled with the fallback count, not
// as a plain 2 bpw file; the plain I2_S file keeps llama.cpp's label.
func TestBenchLabelsFallback(t *testing.T) {
	iq := filepath.Join(t.TempDir(), "tiny-iq2_bn.gguf")
	if _, err := convert.RequantFile(context.Background(), tiny, iq, false, false, convert.RequantOptions{OutType: "iq2_bn", AllowFallback: true, Log: io.Discard}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{iq, "bitnet ?B IQ2_BN - 2.00 bpw Bitnet (12 of 14 projections F16)"},
		{tiny, "bitnet ?B I2_S - 2 bpw ternary"},
	} {
		f, err := reader.Open(c.file)
		if err != nil {
			t.Fatal(err)
		}
		got := describe(c.file, f).ModelType
		f.Close()
		if got != c.want {
			t.Errorf("%s: model_type %q, want %q", filepath.Base(c.file), got, c.want)
		}
	}
}
