package hub

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/internal/hubtest"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

// testRepo is a sharded repository with side files the conversion does not
// need (README.md, optimizer.pt, a stray pytorch_model.bin).
func testRepo() *hubtest.Repo {
	shard := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7) ^ seed
		}
		return b
	}
	return &hubtest.Repo{
		Commit: commit,
		Files: map[string][]byte{
			"config.json":                      []byte(`{"model_type":"bitnet"}`),
			"tokenizer_config.json":            []byte(`{"add_bos_token":true}`),
			"tokenizer.model":                  shard(5000, 3),
			"model.safetensors.index.json":     []byte(`{"metadata":{},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors","c":"model-00001-of-00002.safetensors"}}`),
			"model-00001-of-00002.safetensors": shard(3<<20+17, 1),
			"model-00002-of-00002.safetensors": shard(1<<20, 2),
			"README.md":                        []byte("# readme"),
			"optimizer.pt":                     shard(100, 9),
			"pytorch_model.bin":                shard(100, 8),
		},
		LFS: map[string]bool{"tokenizer.model": true, "model-00001-of-00002.safetensors": true, "model-00002-of-00002.safetensors": true,
			"optimizer.pt": true, "pytorch_model.bin": true},
	}
}

func newClient(t *testing.T, s *hubtest.Server) *Client {
	t.Helper()
	return &Client{Config: Config{Endpoint: s.Hub.URL, CacheDir: t.TempDir()}, RetryDelay: time.Millisecond}
}

func checkOneLine(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
}

func TestDownloadCacheLayout(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	repo := testRepo()
	s.Add("org/name", repo)
	c := newClient(t, s)
	c.Token, c.TokenSource = "tok", "HF_TOKEN"
	var last, total int64
	c.Progress = func(d, tot int64) { last, total = d, tot }
	snap, err := c.Download(context.Background(), Ref{Repo: "org/name", Revision: "main"}, true)
	if err != nil {
		t.Fatal(err)
	}
	repoDir := filepath.Join(c.CacheDir, "models--org--name")
	if want := filepath.Join(repoDir, "snapshots", commit); snap.Dir != want || snap.Commit != commit {
		t.Fatalf("snapshot %s @ %s, want %s", snap.Dir, snap.Commit, want)
	}
	want := []string{"config.json", "model.safetensors.index.json", "tokenizer.model", "tokenizer_config.json",
		"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}
	if strings.Join(snap.Files, ",") != strings.Join(want, ",") {
		t.Errorf("files %v, want %v", snap.Files, want)
	}
	var size int64
	for _, f := range want {
		b := repo.Files[f]
		size += int64(len(b))
		etag := hubtest.GitSHA1(b)
		if repo.LFS[f] {
			etag = hubtest.SHA256(b)
		}
		p := filepath.Join(snap.Dir, f)
		link, err := os.Readlink(p)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if link != filepath.Join("..", "..", "blobs", etag) {
			t.Errorf("%s -> %s, want ../../blobs/%s", f, link, etag)
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s: content differs (%v)", f, err)
		}
	}
	if last != size || total != size || snap.Received != size {
		t.Errorf("progress %d/%d, received %d, want %d", last, total, snap.Received, size)
	}
	ref, err := os.ReadFile(filepath.Join(repoDir, "refs", "main"))
	if err != nil || string(ref) != commit {
		t.Errorf("refs/main = %q (%v), want %s", ref, err, commit)
	}
	for _, f := range []string{"README.md", "optimizer.pt", "pytorch_model.bin"} {
		if _, err := os.Lstat(filepath.Join(snap.Dir, f)); err == nil {
			t.Errorf("%s was downloaded", f)
		}
	}
	for _, r := range s.Requests() {
		if r.Blob && r.Auth != "" {
			t.Errorf("the token went to the blob host: %+v", r)
		}
		if !r.Blob && r.Auth != "Bearer tok" {
			t.Errorf("no token sent to the Hub: %+v", r)
		}
		if strings.Contains(r.Path, "README") || strings.Contains(r.Path, "optimizer") {
			t.Errorf("asked for a file not needed: %+v", r)
		}
	}

	// A second run reuses every blob: nothing but metadata requests.
	n := len(s.Requests())
	snap2, err := c.Download(context.Background(), Ref{Repo: "org/name", Revision: commit}, true)
	if err != nil || snap2.Dir != snap.Dir || snap2.Received != 0 {
		t.Fatalf("second run %+v, %v", snap2, err)
	}
	for _, r := range s.Requests()[n:] {
		if r.Method == "GET" && !strings.HasPrefix(r.Path, "/api/") {
			t.Errorf("second run downloaded %s", r.Path)
		}
	}

	// Offline, the same snapshot without the server.
	s.Close()
	c.Offline = true
	snap3, err := c.Download(context.Background(), Ref{Repo: "org/name", Revision: "main"}, true)
	if err != nil || snap3.Dir != snap.Dir {
		t.Fatalf("offline: %+v, %v", snap3, err)
	}
	_, err = c.Download(context.Background(), Ref{Repo: "org/name", Revision: "v2"}, true)
	if !errors.Is(err, ErrNotCached) || !strings.Contains(err.Error(), "refs/v2") {
		t.Errorf("offline, uncached revision: %v", err)
	}
	checkOneLine(t, err)
	// A cached blob whose bytes changed is refused offline too.
	blob := filepath.Join(repoDir, "blobs", hubtest.SHA256(repo.Files["tokenizer.model"]))
	if err := os.WriteFile(blob, []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = c.Download(context.Background(), Ref{Repo: "org/name", Revision: "main"}, true)
	if !errors.Is(err, ErrHashMismatch) {
		t.Errorf("offline, damaged blob: %v", err)
	}
	checkOneLine(t, err)
}

func TestDownloadVocabOnlySkipsWeights(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	s.Add("org/name", testRepo())
	c := newClient(t, s)
	snap, err := c.Download(context.Background(), Ref{Repo: "org/name", Revision: "main"}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range snap.Files {
		if strings.HasSuffix(f, ".safetensors") {
			t.Errorf("weights %s fetched without weights", f)
		}
	}
}

func TestDownloadResumesDroppedConnection(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	repo := testRepo()
	s.Add("org/name", repo)
	const f = "model-00001-of-00002.safetensors"
	s.Drop(f, 2)
	c := newClient(t, s)
	snap, err := c.Download(context.Background(), Ref{Repo: "org/name", Revision: "main"}, true)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(snap.Dir, f))
	if !bytes.Equal(got, repo.Files[f]) {
		t.Fatal("resumed file differs")
	}
	var ranges []string
	for _, r := range s.Requests() {
		if r.Blob && r.Range != "" {
			ranges = append(ranges, r.Range)
		}
	}
	// Half of the file, then half of the rest.
	n := len(repo.Files[f])
	want := []string{"bytes=" + strconv.Itoa(n/2) + "-", "bytes=" + strconv.Itoa(n/2+(n-n/2)/2) + "-"}
	if strings.Join(ranges, ",") != strings.Join(want, ",") {
		t.Errorf("range requests %v, want %v", ranges, want)
	}
}

// TestDownloadResumesAcrossRuns: a run whose retries are used up keeps the
// partial blob; the next run continues it with a Range request.
func TestDownloadResumesAcrossRuns(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	repo := testRepo()
	s.Add("org/name", repo)
	const f = "model-00001-of-00002.safetensors"
	s.Drop(f, 1)
	c := newClient(t, s)
	c.Retries = -1
	_, err := c.Download(context.Background(), Ref{Repo: "org/name", Revision: "main"}, true)
	if !errors.Is(err, ErrNetwork) || !strings.Contains(err.Error(), "run again to resume") {
		t.Fatalf("dropped connection without retries: %v", err)
	}
	checkOneLine(t, err)
	inc := filepath.Join(c.CacheDir, "models--org--name", "blobs", hubtest.SHA256(repo.Files[f])+".incomplete")
	fi, err := os.Stat(inc)
	n := len(repo.Files[f])
	if err != nil || fi.Size() != int64(n/2) {
		t.Fatalf("partial blob: %v, %v; want %d bytes", fi, err, n/2)
	}
	if _, err := os.Stat(filepath.Join(c.CacheDir, "models--org--name", "refs", "main")); err == nil {
		t.Error("refs/main written for an incomplete snapshot")
	}
	mark := len(s.Requests())
	if _, err := c.Download(context.Background(), Ref{Repo: "org/name", Revision: "main"}, true); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range s.Requests()[mark:] {
		if r.Blob && strings.Contains(r.Path, hubtest.SHA256(repo.Files[f])) {
			found = found || r.Range == "bytes="+strconv.Itoa(n/2)+"-"
			if r.Range == "" {
				t.Errorf("second run fetched %s from byte 0", f)
			}
		}
	}
	if !found {
		t.Error("second run sent no Range request for the kept half")
	}
}

func TestDownloadErrors(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	s.Add("org/name", testRepo())
	gated := testRepo()
	gated.Gated, gated.Tokens = true, []string{"good"}
	s.Add("org/gated", gated)
	bad := testRepo()
	s.Add("org/bad", bad)
	s.Corrupt("model-00002-of-00002.safetensors")
	dead := hubtest.New()
	deadURL := dead.Hub.URL
	dead.Close()

	for _, tc := range []struct {
		name, repo, rev, token, endpoint string
		want                             error
		says                             string
	}{
		{"unknown repo", "org/nope", "main", "", "", ErrRepoNotFound, "repository org/nope not found"},
		{"gated without token", "org/gated", "main", "", "", ErrGated, "set HF_TOKEN"},
		{"gated, token without access", "org/gated", "main", "bad", "", ErrGated, "accept its terms"},
		{"revision not found", "org/name", "v9", "", "", ErrRevisionNotFound, `revision "v9" not found in org/name`},
		{"network down", "org/name", "main", "", deadURL, ErrNetwork, "HF_HUB_OFFLINE=1"},
		{"hash mismatch", "org/bad", "main", "", "", ErrHashMismatch, "not the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, s)
			c.Token, c.TokenSource = tc.token, "HF_TOKEN"
			if tc.endpoint != "" {
				c.Endpoint = tc.endpoint
			}
			_, err := c.Download(context.Background(), Ref{Repo: tc.repo, Revision: tc.rev}, true)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want %v saying %q", err, tc.want, tc.says)
			}
			checkOneLine(t, err)
			// the line ends in what to do, not in the sentinel's words
			// (": network error" once ended every failed download)
			if strings.HasSuffix(err.Error(), ": "+tc.want.Error()) {
				t.Errorf("err = %q ends in %q", err, ": "+tc.want.Error())
			}
			if tc.want == ErrNetwork && !strings.Contains(err.Error(), "download failed") {
				t.Errorf("err = %q does not say the download failed", err)
			}
			if tc.want == ErrHashMismatch {
				b := bad.Files["model-00002-of-00002.safetensors"]
				blob := filepath.Join(c.CacheDir, "models--org--bad", "blobs", hubtest.SHA256(b))
				if _, err := os.Stat(blob); err == nil {
					t.Error("a mismatching blob was put in place")
				}
				if _, err := os.Stat(blob + ".incomplete"); err != nil {
					t.Errorf("the mismatching download is not kept: %v", err)
				}
				if _, err := os.Lstat(filepath.Join(c.CacheDir, "models--org--bad", "snapshots", commit, "model-00002-of-00002.safetensors")); err == nil {
					t.Error("a mismatching blob was linked into the snapshot")
				}
			}
		})
	}
	// The gated repository with a token that has access downloads.
	c := newClient(t, s)
	c.Token = "good"
	if _, err := c.Download(context.Background(), Ref{Repo: "org/gated", Revision: "main"}, false); err != nil {
		t.Errorf("gated with access: %v", err)
	}
}

// TestDownloadDiskFull writes the partial blob into /dev/full (Linux).
func TestDownloadDiskFull(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /dev/full")
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	s := hubtest.New()
	defer s.Close()
	repo := testRepo()
	s.Add("org/name", repo)
	c := newClient(t, s)
	blobs := filepath.Join(c.CacheDir, "models--org--name", "blobs")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", filepath.Join(blobs, hubtest.SHA256(repo.Files["tokenizer.model"])+".incomplete")); err != nil {
		t.Fatal(err)
	}
	_, err := c.Download(context.Background(), Ref{Repo: "org/name", Revision: "main"}, true)
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want disk full", err)
	}
	checkOneLine(t, err)
}

// TestDownloadRenamedAndUnavailable: a renamed repository's relative
// redirects are followed, and 503 answers are retried.
func TestDownloadRenamedAndUnavailable(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	repo := testRepo()
	s.Add("org/old", repo)
	s.Rename("org/old", "org/new")
	s.Unavailable("config.json", 2)
	c := newClient(t, s)
	snap, err := c.Download(context.Background(), Ref{Repo: "org/old", Revision: "main"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(snap.Dir, "config.json")); !bytes.Equal(got, repo.Files["config.json"]) {
		t.Error("config.json differs")
	}
	if !strings.Contains(snap.Dir, "models--org--old") {
		t.Errorf("snapshot %s: the cache folder is the name asked for, as huggingface_hub keeps it", snap.Dir)
	}
	redirected := 0
	for _, r := range s.Requests() {
		if strings.HasPrefix(r.Path, "/org/new/resolve/") && r.Method == "HEAD" {
			redirected++
		}
	}
	if redirected == 0 {
		t.Error("no HEAD followed the relative redirect")
	}
	s.Unavailable("tokenizer_config.json", 10)
	c = newClient(t, s)
	c.Retries = 2
	_, err = c.Download(context.Background(), Ref{Repo: "org/new", Revision: "main"}, false)
	if !errors.Is(err, ErrNetwork) || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("503 after the retries: %v", err)
	}
	checkOneLine(t, err)
}
