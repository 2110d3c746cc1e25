package hub

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// DefaultEndpoint is the Hub's address when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// maxTokenBytes bounds the token file read.
const maxTokenBytes = 64 << 10

// Config is where the Hub and the cache are and how to reach them.
type Config struct {
	// Endpoint is the Hub's base URL without a trailing "/" (HF_ENDPOINT).
	Endpoint string
	// CacheDir is the hub cache directory holding models--org--name/.
	CacheDir string
	// Token is sent as a bearer token to Endpoint's host ("" for none).
	Token string
	// TokenSource says where Token came from ("HF_TOKEN", a file path), for
	// error messages.
	TokenSource string
	// Offline uses only the cache (HF_HUB_OFFLINE).
	Offline bool
}

// ConfigFromEnv reads the Config from the environment as huggingface_hub's
// constants.py does: HF_ENDPOINT; HF_HUB_CACHE, else $HF_HOME/hub, where
// HF_HOME defaults to $XDG_CACHE_HOME/huggingface, else
// ~/.cache/huggingface; HF_TOKEN, else the file $HF_TOKEN_PATH, else
// $HF_HOME/token (surrounding white space dropped; an empty value is no
// token); HF_HUB_OFFLINE true for 1, ON, YES or TRUE in any case. A leading
// "~/" in a value is the home directory. getenv is
// os.Getenv outside tests. The error is an unreadable token file (a missing
// one is no token).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	plain := getenv
	getenv = func(k string) string { return expandHome(plain(k)) }
	c := Config{Endpoint: strings.TrimRight(getenv("HF_ENDPOINT"), "/")}
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	home := getenv("HF_HOME")
	if home == "" {
		xdg := getenv("XDG_CACHE_HOME")
		if xdg == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return c, fmt.Errorf("no home directory for the Hugging Face cache (%v): set HF_HOME or HF_HUB_CACHE", err)
			}
			xdg = filepath.Join(h, ".cache")
		}
		home = filepath.Join(xdg, "huggingface")
	}
	c.CacheDir = getenv("HF_HUB_CACHE")
	source := "HF_HUB_CACHE"
	if c.CacheDir == "" {
		c.CacheDir = filepath.Join(home, "hub")
		source = "HF_HOME"
		if getenv("HF_HOME") == "" {
			source = "XDG_CACHE_HOME"
			if getenv("XDG_CACHE_HOME") == "" {
				source = "the home directory (~/.cache/huggingface/hub)"
			}
		}
	}
	if err := checkCacheDir(c.CacheDir, source); err != nil {
		return c, err
	}
	switch strings.ToUpper(strings.TrimSpace(getenv("HF_HUB_OFFLINE"))) {
	case "1", "ON", "YES", "TRUE":
		c.Offline = true
	}
	if t := strings.TrimSpace(getenv("HF_TOKEN")); t != "" {
		c.Token, c.TokenSource = t, "HF_TOKEN"
		return c, nil
	}
	path := getenv("HF_TOKEN_PATH")
	if path == "" {
		path = filepath.Join(home, "token")
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read the Hugging Face token: %w", err)
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, maxTokenBytes+1))
	if err != nil {
		return c, fmt.Errorf("read the Hugging Face token %s: %w", path, err)
	}
	if len(buf) > maxTokenBytes {
		return c, fmt.Errorf("token file %s is larger than %d bytes: not a token", path, maxTokenBytes)
	}
	if t := strings.TrimSpace(string(buf)); t != "" {
		c.Token, c.TokenSource = t, path
	}
	return c, nil
}

// expandHome replaces a leading "~/" with the home directory, as
// huggingface_hub's os.path.expanduser does for its paths.
func expandHome(p string) string {
	rest, ok := strings.CutPrefix(p, "~"+string(filepath.Separator))
	if !ok {
		rest, ok = strings.CutPrefix(p, "~/")
	}
	if !ok {
		return p
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(h, rest)
}

// RepoDir is the cache directory of repository repo ("org/name"):
// CacheDir/models--org--name (huggingface_hub's repo_folder_name).
func (c Config) RepoDir(repo string) string {
	return filepath.Join(c.CacheDir, "models--"+strings.ReplaceAll(repo, "/", "--"))
}

// checkCacheDir refuses a cache directory that is, or lies under, an
// existing file: every cache path below it would fail with a bare "not a
// directory" naming a file deep in the cache. source names the variable
// the directory came from.
func checkCacheDir(dir, source string) error {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			if fi.IsDir() {
				return nil
			}
			if d == dir {
				return fmt.Errorf("%s: the Hugging Face cache %s is a file, not a directory; point %s at a directory (or unset it)", source, dir, source)
			}
			return fmt.Errorf("%s: the Hugging Face cache %s lies under %s, which is a file, not a directory; point %s at a directory (or unset it)", source, dir, d, source)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}
