package hub

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in, repo, rev, err string
	}{
		{in: "microsoft/bitnet-b1.58-2B-4T", repo: "microsoft/bitnet-b1.58-2B-4T", rev: "main"},
		{in: "1bitLLM/bitnet_b1_58-large@v1.0", repo: "1bitLLM/bitnet_b1_58-large", rev: "v1.0"},
		{in: "org/name@refs/pr/1", repo: "org/name", rev: "refs/pr/1"},
		{in: "org/name@" + commit, repo: "org/name", rev: commit},
		{in: "name", err: "org/name"},
		{in: "./org/name", err: "exactly one"},
		{in: "./name", err: `owner "." must start`},
		{in: "/abs/dir", err: "exactly one"},
		{in: "/dir", err: "is empty"},
		{in: "a/b/c", err: "exactly one"},
		{in: "org/na--me", err: `"--"`},
		{in: "org/-name", err: "must start and end"},
		{in: "org/na me", err: "holds ' '"},
		{in: "org/name@", err: "empty revision"},
		{in: "org/name@../x", err: `".."`},
		{in: "org/name@a//b", err: "empty"},
		{in: "0/0@0..", err: `".."`},
		{in: "org/name@v1.", err: `ends in "."`},
		{in: "org/name@x.lock", err: ".lock"},
		{in: "org/name@refs/.hidden", err: `starting with "."`},
		{in: "org/name@v1.0.2", repo: "org/name", rev: "v1.0.2"},
		{in: "org/" + strings.Repeat("x", 97), err: "longer than 96"},
		{in: `C:\models\x`, err: "org/name"},
	} {
		r, err := ParseRef(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || r.Repo != tc.repo || r.Revision != tc.rev {
			t.Errorf("%q: %+v, %v; want %s@%s", tc.in, r, err, tc.repo, tc.rev)
		}
	}
	if n := (Ref{Repo: "org/my-model"}).Name(); n != "my-model" {
		t.Errorf("Name %q", n)
	}
}

func TestConfigFromEnv(t *testing.T) {
	home := t.TempDir()
	tokFile := filepath.Join(home, "tok")
	if err := os.WriteFile(tokFile, []byte(" hf_file \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "hh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "hh", "token"), []byte("hf_home\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                   string
		env                    map[string]string
		endpoint, cache, token string
		offline                bool
	}{
		{"HF_HUB_CACHE wins", map[string]string{"HF_HUB_CACHE": "/c", "HF_HOME": "/h", "XDG_CACHE_HOME": "/x"}, DefaultEndpoint, "/c", "", false},
		{"HF_HOME/hub and its token", map[string]string{"HF_HOME": filepath.Join(home, "hh"), "XDG_CACHE_HOME": "/x"}, DefaultEndpoint, filepath.Join(home, "hh", "hub"), "hf_home", false},
		{"XDG", map[string]string{"XDG_CACHE_HOME": "/x", "HF_HUB_OFFLINE": "yes"}, DefaultEndpoint, filepath.Join("/x", "huggingface", "hub"), "", true},
		{"HF_TOKEN before the file", map[string]string{"HF_TOKEN": "hf_env", "HF_TOKEN_PATH": tokFile, "HF_HUB_CACHE": "/c"}, DefaultEndpoint, "/c", "hf_env", false},
		{"HF_TOKEN_PATH", map[string]string{"HF_TOKEN_PATH": tokFile, "HF_HUB_CACHE": "/c", "HF_HUB_OFFLINE": "0"}, DefaultEndpoint, "/c", "hf_file", false},
		{"mirror", map[string]string{"HF_ENDPOINT": "https://hf-mirror.com/", "HF_HUB_CACHE": "/c", "HF_HUB_OFFLINE": "TRUE"}, "https://hf-mirror.com", "/c", "", true},
	} {
		c, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if c.Endpoint != tc.endpoint || c.CacheDir != tc.cache || c.Token != tc.token || c.Offline != tc.offline {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		c, _ := ConfigFromEnv(func(k string) string { return map[string]string{"HF_HOME": "~/hf"}[k] })
		if want := filepath.Join(h, "hf", "hub"); c.CacheDir != want {
			t.Errorf("HF_HOME=~/hf: cache %s, want %s", c.CacheDir, want)
		}
	}
	c, _ := ConfigFromEnv(func(k string) string { return map[string]string{"HF_HUB_CACHE": "/c"}[k] })
	if got := c.RepoDir("org/name"); got != filepath.Join("/c", "models--org--name") {
		t.Errorf("RepoDir %s", got)
	}
}

// TestCacheDirIsAFile: HF_HUB_CACHE (or HF_HOME) naming a file, or a path
// under one, is refused by ConfigFromEnv with one line naming the variable
// (it once failed deep in the download with "open …/refs/main: not a
// directory").
func TestCacheDirIsAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cachefile")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HF_HUB_CACHE": file}, "HF_HUB_CACHE: the Hugging Face cache " + file + " is a file, not a directory; point HF_HUB_CACHE at a directory"},
		{map[string]string{"HF_HUB_CACHE": filepath.Join(file, "hub")}, "HF_HUB_CACHE: the Hugging Face cache " + filepath.Join(file, "hub") + " lies under " + file + ", which is a file"},
		{map[string]string{"HF_HOME": file}, "HF_HOME: the Hugging Face cache " + filepath.Join(file, "hub") + " lies under " + file},
		{map[string]string{"XDG_CACHE_HOME": file}, "XDG_CACHE_HOME: the Hugging Face cache"},
	} {
		_, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.env, err, tc.want)
		}
	}
	if _, err := ConfigFromEnv(func(k string) string { return map[string]string{"HF_HUB_CACHE": filepath.Join(dir, "new", "cache")}[k] }); err != nil {
		t.Errorf("a cache directory still to be created: %v", err)
	}
}

func TestCacheRepoSnapshot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "models--org--name")
	if _, ok, _ := CacheRepoSnapshot(dir); ok {
		t.Error("a missing directory is a cache repository")
	}
	a := filepath.Join(dir, "snapshots", commit)
	b := filepath.Join(dir, "snapshots", strings.Repeat("b", 40))
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, ok, err := CacheRepoSnapshot(dir)
	if !ok || err == nil || !strings.Contains(err.Error(), "has no refs/main: convert one of its snapshots: "+a+", "+b) {
		t.Errorf("no refs/main: %v, %v", ok, err)
	}
	if err := writeRef(dir, "main", strings.Repeat("c", 40)); err != nil {
		t.Fatal(err)
	}
	_, _, err = CacheRepoSnapshot(dir)
	if err == nil || !strings.Contains(err.Error(), "but no such snapshot") {
		t.Errorf("dangling refs/main: %v", err)
	}
	if err := writeRef(dir, "main", commit); err != nil {
		t.Fatal(err)
	}
	snap, ok, err := CacheRepoSnapshot(dir)
	if !ok || err != nil || snap != a {
		t.Errorf("refs/main: %s, %v, %v; want %s", snap, ok, err, a)
	}
	plain := t.TempDir()
	if _, ok, _ := CacheRepoSnapshot(plain); ok {
		t.Error("a plain directory is a cache repository")
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"org/name", "org/name@main", "a/b@refs/pr/1", "./x", "a/b/c", "org/na--me@x", "0/0@0..", "a/b@x.lock", "a/b@.hidden"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		// A parsed reference names a safe cache folder and ref file.
		if strings.Count(r.Repo, "/") != 1 || strings.Contains(r.Repo, "..") || r.Revision == "" || strings.Contains(r.Revision, "..") {
			t.Fatalf("%q parsed to %+v", s, r)
		}
		if !filepath.IsLocal(filepath.FromSlash(r.Revision)) {
			t.Fatalf("%q: revision %q leaves refs/", s, r.Revision)
		}
		if r2, err := ParseRef(r.String()); err != nil || r2 != r {
			t.Fatalf("%q: round trip %+v, %v", s, r2, err)
		}
	})
}

func FuzzParseIndexShards(f *testing.F) {
	f.Add([]byte(`{"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}}`))
	f.Add([]byte(`{"weight_map":{"a":"../x.safetensors"}}`))
	f.Add([]byte(`{"weight_map":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		shards, err := ParseIndexShards(data)
		if err != nil {
			return
		}
		for i, s := range shards {
			if checkRepoPath(s) != nil || !strings.HasSuffix(s, ".safetensors") || (i > 0 && shards[i-1] >= s) {
				t.Fatalf("shards %q", shards)
			}
		}
	})
}
