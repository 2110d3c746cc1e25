package hf2gguf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/hubtest"
)

const (
	golden = "../../../../testdata/golden/tiny-bitnet/hf"
	commit = "89abcdef0123456789abcdef0123456789abcdef"
)

// shardedRepo writes a sharded checkpoint of the tiny model's shape (dummy
// weights, the golden tokenizer) into dir/name and returns it as a Hub
// repository, with side files a conversion does not need.
func shardedRepo(t *testing.T, dir string) (string, *hubtest.Repo) {
	t.Helper()
	var cfg map[string]any
	b, err := os.ReadFile(filepath.Join(golden, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "name")
	if _, err := dummy.Generate(context.Background(), src, dummy.Options{Config: cfg, Tokenizer: golden, Seed: 7, MaxShardBytes: 1_000_000}); err != nil {
		t.Fatal(err)
	}
	tc, err := os.ReadFile(filepath.Join(golden, "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "tokenizer_config.json"), tc, 0o644); err != nil {
		t.Fatal(err)
	}
	repo := &hubtest.Repo{Commit: commit, Files: map[string][]byte{"README.md": []byte("# name"), "optimizer.pt": []byte("x")}, LFS: map[string]bool{}}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	shards := 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		repo.Files[e.Name()] = b
		if strings.HasSuffix(e.Name(), ".safetensors") || e.Name() == "tokenizer.model" {
			repo.LFS[e.Name()] = true
			shards++
		}
	}
	if shards < 3 || repo.Files["model.safetensors.index.json"] == nil {
		t.Fatalf("the test checkpoint has %d LFS files and index %v: not sharded", shards, repo.Files["model.safetensors.index.json"] != nil)
	}
	return src, repo
}

// hubEnv points the Hub settings at s and a fresh cache, with no token.
func hubEnv(t *testing.T, endpoint string) string {
	t.Helper()
	cache := filepath.Join(t.TempDir(), "hub")
	t.Setenv("HF_ENDPOINT", endpoint)
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_TOKEN_PATH", filepath.Join(t.TempDir(), "no-token"))
	t.Setenv("HF_HUB_OFFLINE", "")
	return cache
}

func runMain(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func generalName(t *testing.T, path string) string {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, _ := f.String("general.name")
	return n
}

// TestRepoID is acceptance a's main line and defects H28 and H24: a repo id
// is downloaded into the Hub's cache layout (a dropped connection resumed)
// and converts to the bytes the same files give from a directory; offline,
// the cache alone converts; the cache repository folder converts too.
func TestRepoID(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	tmp := t.TempDir()
	src, repo := shardedRepo(t, tmp)
	s.Add("org/name", repo)
	cache := hubEnv(t, s.Hub.URL)
	s.Drop("model-00002-of-00003.safetensors", 1)

	fromDir := filepath.Join(tmp, "dir.gguf")
	if code, _, stderr := runMain("hf2gguf", src, "--outfile", fromDir); code != 0 {
		t.Fatalf("directory conversion: exit %d: %s", code, stderr)
	}
	outDir := filepath.Join(tmp, "out") + string(filepath.Separator)
	os.Mkdir(outDir, 0o755)
	code, _, stderr := runMain("hf2gguf", "org/name@main", "--outfile", outDir)
	if code != 0 {
		t.Fatalf("hf2gguf org/name@main: exit %d: %s", code, stderr)
	}
	fromRepo := filepath.Join(outDir, "name-i2_s.gguf")
	a, _ := os.ReadFile(fromDir)
	b, err := os.ReadFile(fromRepo)
	if err != nil || !bytes.Equal(a, b) || len(a) == 0 {
		t.Fatalf("repo conversion %s (%v) differs from the directory's", fromRepo, err)
	}
	if n := generalName(t, fromRepo); n != "name" {
		t.Errorf("general.name %q, want the repository's name", n)
	}
	resumed := false
	for _, r := range s.Requests() {
		resumed = resumed || (r.Blob && strings.HasPrefix(r.Range, "bytes=") && !strings.HasPrefix(r.Range, "bytes=0-"))
		if strings.Contains(r.Path, "README") || strings.Contains(r.Path, "optimizer") {
			t.Errorf("fetched %s, which the conversion does not need", r.Path)
		}
	}
	if !resumed {
		t.Error("the dropped connection was not resumed with a Range request")
	}

	// The Hub's cache layout.
	repoDir := filepath.Join(cache, "models--org--name")
	if ref, err := os.ReadFile(filepath.Join(repoDir, "refs", "main")); err != nil || string(ref) != commit {
		t.Errorf("refs/main %q, %v", ref, err)
	}
	for name, data := range repo.Files {
		p := filepath.Join(repoDir, "snapshots", commit, name)
		if name == "README.md" || name == "optimizer.pt" {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%s is in the snapshot", name)
			}
			continue
		}
		etag := hubtest.GitSHA1(data)
		if repo.LFS[name] {
			etag = hubtest.SHA256(data)
		}
		if link, err := os.Readlink(p); err != nil || link != filepath.Join("..", "..", "blobs", etag) {
			t.Errorf("%s -> %q (%v), want ../../blobs/%s", name, link, err, etag)
		}
	}

	// Offline, without the server, from the cache.
	s.Close()
	t.Setenv("HF_HUB_OFFLINE", "1")
	offline := filepath.Join(tmp, "offline.gguf")
	if code, _, stderr := runMain("hf2gguf", "org/name@main", "--outfile", offline); code != 0 {
		t.Fatalf("offline: exit %d: %s", code, stderr)
	}
	if c, _ := os.ReadFile(offline); !bytes.Equal(a, c) {
		t.Error("the offline conversion differs")
	}

	// H24: the cache repository folder itself converts its refs/main snapshot.
	outDir2 := filepath.Join(tmp, "out2") + string(filepath.Separator)
	os.Mkdir(outDir2, 0o755)
	code, _, stderr = runMain("hf2gguf", repoDir, "--outfile", outDir2)
	if code != 0 || !strings.Contains(stderr, "is a Hugging Face cache repository") {
		t.Fatalf("cache repository folder: exit %d: %s", code, stderr)
	}
	if c, _ := os.ReadFile(filepath.Join(outDir2, "name-i2_s.gguf")); !bytes.Equal(a, c) {
		t.Error("the cache-folder conversion differs or is not named name-i2_s.gguf")
	}
}

// TestRepoIDFailures: each failure of a repo id download is one line and
// exit 1 that says what failed and what to do, never ending in ": network
// error" (acceptance a); a path that is neither a directory nor a repo id
// (H28) is exit 1, a malformed repo id a usage error, exit 2; a repo-id-shaped path whose first segment
// is a local directory is a mistyped path, not a download; HF_HUB_CACHE
// naming a file is named as such.
func TestRepoIDFailures(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	tmp := t.TempDir()
	_, repo := shardedRepo(t, tmp)
	s.Add("org/name", repo)
	gated := *repo
	gated.Gated, gated.Tokens = true, []string{"hf_ok"}
	s.Add("org/gated", &gated)
	s.Add("org/bad", repo)
	s.Corrupt("model-00003-of-00003.safetensors")
	dead := hubtest.New()
	deadURL := dead.Hub.URL
	dead.Close()

	cachefile := filepath.Join(tmp, "cachefile")
	os.WriteFile(cachefile, nil, 0o644)
	cases := []struct {
		name, arg, endpoint, token, offline, want string
		code                                      int
		cache                                     string
	}{
		{"unknown repo", "org/nope", "", "", "", "repository org/nope not found at http://127.0.0.1:", 1, ""},
		{"unknown repo, meant as a directory", "models/tiny", "", "", "", "there is no directory models/tiny either", 1, ""},
		{"gated without token", "org/gated", "", "", "", "org/gated is a gated repository", 1, ""},
		{"revision not found", "org/name@v9", "", "", "", `revision "v9" not found in org/name`, 1, ""},
		{"network down", "org/name", deadURL, "", "", "org/name@main: download failed, the Hub cannot be reached", 1, ""},
		{"hash mismatch", "org/bad", "", "", "", "the downloaded bytes have sha256", 1, ""},
		{"offline, not cached", "org/name", "", "", "1", "not in the Hugging Face cache", 1, ""},
		{"neither a directory nor a repo id", "./no/such/dir", "", "", "", "no such directory, and not a Hugging Face repo id", 1, ""},
		{"malformed repo id", "org//name", "", "", "", "not a Hugging Face repo id", 2, ""},
		{"malformed repo name", "org/na me", "", "", "", `repo name "na me"`, 2, ""},
		{"mistyped local path", "sub/nope", "", "", "", "sub/nope: no such directory (sub exists here, so this is read as a path", 1, ""},
		{"HF_HUB_CACHE is a file", "org/name", "", "", "", "HF_HUB_CACHE: the Hugging Face cache " + cachefile + " is a file, not a directory", 1, cachefile},
	}
	t.Chdir(tmp)
	os.Mkdir("sub", 0o755)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep := s.Hub.URL
			if tc.endpoint != "" {
				ep = tc.endpoint
			}
			hubEnv(t, ep)
			t.Setenv("HF_TOKEN", tc.token)
			t.Setenv("HF_HUB_OFFLINE", tc.offline)
			if tc.cache != "" {
				t.Setenv("HF_HUB_CACHE", tc.cache)
			}
			if tc.code == 0 {
				tc.code = 1
			}
			out := filepath.Join(t.TempDir(), "x.gguf")
			code, stdout, stderr := runMain("hf2gguf", tc.arg, "--outfile", out)
			if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" || strings.HasSuffix(stderr, "network error\n") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and one line saying %q", code, stdout, stderr, tc.code, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("an output was written")
			}
		})
	}
	t.Run("disk full", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("needs /dev/full")
		}
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full")
		}
		cache := hubEnv(t, s.Hub.URL)
		blobs := filepath.Join(cache, "models--org--name", "blobs")
		if err := os.MkdirAll(blobs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/full", filepath.Join(blobs, hubtest.GitSHA1(repo.Files["config.json"])+".incomplete")); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runMain("hf2gguf", "org/name", "--outfile", filepath.Join(t.TempDir(), "x.gguf"))
		if code != 1 || !strings.Contains(stderr, "disk full writing") || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
	})
}

// TestCacheRepositoryFolder is defect H24: a models--org--name folder given
// as DIR converts the snapshot refs/main names; without refs/main the error
// names the snapshot to convert.
func TestCacheRepositoryFolder(t *testing.T) {
	repoDir := filepath.Join(t.TempDir(), "models--org--tiny")
	snap := filepath.Join(repoDir, "snapshots", commit)
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repoDir, "blobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config.json", "model.safetensors", "tokenizer.model", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(golden, f))
		if err != nil {
			t.Fatal(err)
		}
		etag := hubtest.SHA256(b)
		if err := os.WriteFile(filepath.Join(repoDir, "blobs", etag), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..", "..", "blobs", etag), filepath.Join(snap, f)); err != nil {
			t.Skipf("no symlinks here: %v", err)
		}
	}
	out := t.TempDir() + string(filepath.Separator)
	code, _, stderr := runMain("hf2gguf", repoDir, "--outfile", out)
	if code != 1 || !strings.Contains(stderr, "has no refs/main: convert its snapshot "+snap) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("without refs/main: exit %d, %q", code, stderr)
	}
	if err := os.MkdirAll(filepath.Join(repoDir, "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runMain("hf2gguf", repoDir, "--outfile", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := generalName(t, filepath.Join(out, "tiny-i2_s.gguf")); n != "tiny" {
		t.Errorf("general.name %q, want tiny", n)
	}
}
