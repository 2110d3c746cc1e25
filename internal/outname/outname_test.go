package outname

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"bitnet_b1_58-large", "bitnet_b1_58-large"},
		{"microsoft/BitNet-b1.58-2B-4T", "microsoft-BitNet-b1.58-2B-4T"},
		{"../../x", "x"},
		{"a\nb", "a-b"},
		{"My Model  v2", "My-Model-v2"},
		{`a<b>c:d"e|f?g*h\i`, "a-b-c-d-e-f-g-h-i"},
		{"..", DefaultStem},
		{"", DefaultStem},
		{"/", DefaultStem},
		{".hidden", "hidden"},
		{"modèle-ü", "modèle-ü"},
		{strings.Repeat("é", 150), strings.Repeat("é", 100)},
	} {
		if got := Stem(tc.in); got != tc.want {
			t.Errorf("Stem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestModelNameHubCache(t *testing.T) {
	root := t.TempDir()
	snap := filepath.Join(root, "hub", "models--microsoft--bitnet-b1.58-2B-4T", "snapshots", "0123456789abcdef0123456789abcdef01234567")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := ModelName(snap); got != "bitnet-b1.58-2B-4T" {
		t.Errorf("ModelName(snapshot) = %q, want the repo name", got)
	}
	if got := ModelName(snap + "/"); got != "bitnet-b1.58-2B-4T" {
		t.Errorf("ModelName(snapshot/) = %q", got)
	}
	if repo, ok := HubRepo(snap); !ok || repo != "microsoft/bitnet-b1.58-2B-4T" {
		t.Errorf("HubRepo = %q, %v", repo, ok)
	}
	plain := filepath.Join(root, "my-model")
	if got := ModelName(plain); got != "my-model" {
		t.Errorf("ModelName(plain) = %q", got)
	}
	if _, ok := HubRepo(filepath.Join(root, "x", "snapshots", "abc")); ok {
		t.Error("HubRepo accepted a snapshots dir outside a models-- folder")
	}
}

func TestFill(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"x-{ftype}.gguf", "x-i2_s.gguf", ""},
		{"x-{outtype}.gguf", "x-i2_s.gguf", ""},
		{"x-{FTYPE}.gguf", "x-I2_S.gguf", ""},
		{"x-{OUTTYPE}-{}.gguf", "x-I2_S-i2_s.gguf", ""},
		{"x-{{lit}}.gguf", "x-{lit}.gguf", ""},
		{"plain.gguf", "plain.gguf", ""},
		{"x-{bogus}.gguf", "", "{bogus}"},
		{"x-{ftype.gguf", "", "unclosed"},
		{"x-}.gguf", "", "single"},
	} {
		got, err := Fill(tc.in, "i2_s")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Fill(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Fill(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		r    Request
		want string
		err  string
	}{
		{"default", Request{ModelName: "org/m", OutType: "tl1"}, "." + string(filepath.Separator) + "org-m-tl1.gguf", ""},
		{"vocab default", Request{ModelName: "m", OutType: "i2_s", Suffix: "vocab"}, "." + string(filepath.Separator) + "m-vocab.gguf", ""},
		{"directory", Request{OutFile: dir, ModelName: "m", OutType: "f16"}, filepath.Join(dir, "m-f16.gguf"), ""},
		{"directory slash", Request{OutFile: dir + "/", ModelName: "m", OutType: "f16"}, filepath.Join(dir, "m-f16.gguf"), ""},
		{"template", Request{OutFile: filepath.Join(dir, "x-{ftype}.gguf"), ModelName: "m", OutType: "tl2"}, filepath.Join(dir, "x-tl2.gguf"), ""},
		{"template dir not filled", Request{OutFile: "{ftype}/x.gguf", OutType: "tl2"}, "{ftype}/x.gguf", ""},
		{"missing dir slash", Request{OutFile: filepath.Join(dir, "new") + "/", OutType: "i2_s"}, "", "does not exist"},
		{"bad template", Request{OutFile: "x-{nope}.gguf", OutType: "i2_s"}, "", "{nope}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.r)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--outfile") {
					t.Fatalf("err %v, want one naming --outfile and %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Resolve = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.gguf")
	if err := Check(f, false); err != nil {
		t.Fatalf("new file: %v", err)
	}
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(f, false); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing without force: %v", err)
	}
	if err := Check(f, true); err != nil {
		t.Errorf("existing with force: %v", err)
	}
	if err := Check(filepath.Join(dir, "nope", "a.gguf"), true); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing dir: %v", err)
	}
	if err := Check(filepath.Join(f, "a.gguf"), true); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("dir is a file: %v", err)
	}
	if err := Check(dir, true); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("path is a dir: %v", err)
	}
}
