package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Defaults of Client.
const (
	// DefaultWorkers is the number of files downloaded at once
	// (huggingface_hub's snapshot_download max_workers).
	DefaultWorkers = 8
	// DefaultRetries is how often a broken transfer is resumed before the
	// download fails (huggingface_hub's http_get retries 5 times).
	DefaultRetries = 5
	// DefaultRetryDelay is the wait before the first resume; it doubles each
	// time.
	DefaultRetryDelay = time.Second

	maxInfoBytes = 32 << 20 // a model-info answer (the file list)
	copyChunk    = 1 << 20
)

// Client downloads repositories from Config.Endpoint into Config.CacheDir.
// The zero values of the fields other than Config are their defaults.
type Client struct {
	Config
	// HTTP is the client used (nil: one with 10 s connect and header
	// timeouts and no overall timeout, so large files can take their time).
	HTTP *http.Client
	// Workers is the number of parallel downloads (0: DefaultWorkers).
	Workers int
	// Retries is how often one file's transfer is resumed (0:
	// DefaultRetries; negative: never).
	Retries int
	// RetryDelay is the first wait between resumes (0: DefaultRetryDelay).
	RetryDelay time.Duration
	// Progress, when set, is called with the bytes present (cached,
	// resumed or received) and the total of the files known so far; calls
	// may come from several goroutines, one at a time.
	Progress func(done, total int64)
}

// Snapshot is a downloaded revision.
type Snapshot struct {
	// Dir is CacheDir/models--org--name/snapshots/<commit>.
	Dir string
	// Commit is the 40-hex commit the revision resolved to.
	Commit string
	// Files are the repository paths fetched, in the order listed.
	Files []string
	// Received is the number of bytes transferred in this run (0 when
	// everything came from the cache).
	Received int64
}

// sibling is one entry of the model-info "siblings" list.
type sibling struct {
	RFilename string `json:"rfilename"`
	Size      *int64 `json:"size"`
}

// modelInfo is the part of the model-info answer we read.
type modelInfo struct {
	SHA      string    `json:"sha"`
	Siblings []sibling `json:"siblings"`
}

// fileMeta is what a HEAD of a resolve URL says about one file.
type fileMeta struct {
	file string
	etag string
	size int64 // -1: not reported
	url  string
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = 10 * time.Second
	c.HTTP = &http.Client{Transport: tr}
	return c.HTTP
}

// Download fetches what a conversion of ref needs into the cache and
// returns its snapshot: config.json, the tokenizer files
// (tokenizer.json, tokenizer.model, tokenizer_config.json,
// special_tokens_map.json, added_tokens.json), a sentence-transformers
// model's modules.json and module configs, and, when weights is true, the
// weights (the shards model.safetensors.index.json names, else
// model.safetensors, else every top-level *.safetensors). Files the cache
// already holds are checked and reused; up to Workers files are fetched at
// once, each resumed after a broken connection. With Config.Offline the
// cache alone is used (CachedSnapshot). Errors are one line (see the
// package's sentinels).
func (c *Client) Download(ctx context.Context, ref Ref, weights bool) (*Snapshot, error) {
	if c.Offline {
		dir, err := c.CachedSnapshot(ref)
		if err != nil {
			return nil, err
		}
		return &Snapshot{Dir: dir, Commit: filepath.Base(dir)}, nil
	}
	info, err := c.modelInfo(ctx, ref)
	if err != nil {
		return nil, err
	}
	listed := map[string]bool{}
	for _, s := range info.Siblings {
		listed[s.RFilename] = true
	}
	first := selectSmall(listed)
	if !listed["config.json"] {
		return nil, fmt.Errorf("%s has no config.json: not a transformers model repository", ref)
	}
	d := &download{c: c, ref: ref, commit: info.SHA, repoDir: c.RepoDir(ref.Repo), done: map[string]int64{}}
	if err := d.fetchAll(ctx, first); err != nil {
		return nil, err
	}
	files := first
	if weights {
		shards, err := d.selectWeights(listed)
		if err != nil {
			return nil, err
		}
		if err := d.fetchAll(ctx, shards); err != nil {
			return nil, err
		}
		files = append(files, shards...)
	}
	if err := writeRef(d.repoDir, ref.Revision, info.SHA); err != nil {
		return nil, err
	}
	return &Snapshot{Dir: filepath.Join(d.repoDir, "snapshots", info.SHA), Commit: info.SHA, Files: files, Received: d.received}, nil
}

// smallFiles are the side files a conversion reads, besides config.json.
var smallFiles = []string{"config.json", "model.safetensors.index.json", "tokenizer.json", "tokenizer.model",
	"tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", "modules.json"}

// selectSmall lists the small files to fetch first: smallFiles that exist
// and, for a sentence-transformers model (modules.json), each module
// directory's config.json.
func selectSmall(listed map[string]bool) []string {
	var out []string
	for _, f := range smallFiles {
		if listed[f] {
			out = append(out, f)
		}
	}
	if listed["modules.json"] {
		var mods []string
		for f := range listed {
			if dir, base := path.Split(f); base == "config.json" && dir != "" && !strings.Contains(strings.TrimSuffix(dir, "/"), "/") {
				mods = append(mods, f)
			}
		}
		sortStrings(mods)
		out = append(out, mods...)
	}
	return out
}

// selectWeights lists the weight files: the index's shards (each must be
// listed by the Hub), else model.safetensors, else every top-level
// *.safetensors (the rules of hf.Open).
func (d *download) selectWeights(listed map[string]bool) ([]string, error) {
	if listed["model.safetensors.index.json"] {
		p := filepath.Join(d.repoDir, "snapshots", d.commit, "model.safetensors.index.json")
		data, err := readLimited(p, maxInfoBytes)
		if err != nil {
			return nil, err
		}
		shards, err := ParseIndexShards(data)
		if err != nil {
			return nil, fmt.Errorf("%s: model.safetensors.index.json: %w", d.ref, err)
		}
		for _, s := range shards {
			if !listed[s] {
				return nil, fmt.Errorf("%s: model.safetensors.index.json names shard %q, which the repository does not have", d.ref, s)
			}
		}
		return shards, nil
	}
	if listed["model.safetensors"] {
		return []string{"model.safetensors"}, nil
	}
	var out []string
	for f := range listed {
		if strings.HasSuffix(f, ".safetensors") && !strings.Contains(f, "/") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no *.safetensors weights (only safetensors checkpoints are converted)", d.ref)
	}
	sortStrings(out)
	return out, nil
}

func readLimited(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, limit)
	}
	return b, nil
}

// ParseIndexShards returns the distinct shard files of a
// model.safetensors.index.json ("weight_map": tensor → file), sorted. A
// shard name must be a local path (no "..", not absolute, no back-slash)
// ending in .safetensors.
func ParseIndexShards(data []byte) ([]string, error) {
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("not a JSON index: %v", err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, errors.New("weight_map is missing or empty")
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range idx.WeightMap {
		if seen[f] {
			continue
		}
		if err := checkRepoPath(f); err != nil || !strings.HasSuffix(f, ".safetensors") {
			return nil, fmt.Errorf("shard name %q is not a .safetensors file inside the repository", f)
		}
		seen[f] = true
		out = append(out, f)
	}
	sortStrings(out)
	return out, nil
}

// checkRepoPath refuses a repository file path that could leave the
// snapshot directory.
func checkRepoPath(f string) error {
	if f == "" || strings.ContainsAny(f, "\\\x00") || strings.HasPrefix(f, "/") || !filepath.IsLocal(filepath.FromSlash(f)) {
		return fmt.Errorf("file name %q leaves the repository", f)
	}
	for _, seg := range strings.Split(f, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("file name %q leaves the repository", f)
		}
	}
	return nil
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// auth adds the token to a request for the endpoint's host.
func (c *Client) auth(req *http.Request) {
	if c.Token == "" {
		return
	}
	if ep, err := url.Parse(c.Endpoint); err == nil && strings.EqualFold(ep.Host, req.URL.Host) {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
}

// netError describes a failed request (no answer at all).
func netError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return tagf(ErrNetwork, "%s: download failed, the Hub cannot be reached (%v): check the connection (and HF_ENDPOINT if set), or set HF_HUB_OFFLINE=1 to use the cached copy", what, err)
}

func (c *Client) modelInfo(ctx context.Context, ref Ref) (*modelInfo, error) {
	u := c.Endpoint + "/api/models/" + ref.Repo + "/revision/" + url.PathEscape(ref.Revision) + "?blobs=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("HF_ENDPOINT %q: %v", c.Endpoint, err)
	}
	c.auth(req)
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, netError(ctx, ref.String(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, c.hubError(resp, ref, "", true)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxInfoBytes+1))
	if err != nil {
		return nil, netError(ctx, ref.String(), err)
	}
	if len(body) > maxInfoBytes {
		return nil, fmt.Errorf("%s: the model-info answer is larger than %d bytes", ref, maxInfoBytes)
	}
	var info modelInfo
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("%s: the model-info answer of %s is not the Hub's JSON (%v); is HF_ENDPOINT a Hub?", ref, c.Endpoint, err)
	}
	if !IsCommit(info.SHA) {
		return nil, fmt.Errorf("%s: the model-info answer names no commit (sha %q)", ref, info.SHA)
	}
	for _, s := range info.Siblings {
		if err := checkRepoPath(s.RFilename); err != nil {
			return nil, fmt.Errorf("%s: the Hub lists %v", ref, err)
		}
	}
	return &info, nil
}

// resolveURL is {endpoint}/{repo}/resolve/{commit}/{file}.
func (c *Client) resolveURL(ref Ref, commit, file string) string {
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return c.Endpoint + "/" + ref.Repo + "/resolve/" + commit + "/" + strings.Join(segs, "/")
}

// head asks the resolve URL about file without following a redirect to
// another host (relative redirects, a renamed repository, are followed as
// huggingface_hub does).
func (c *Client) head(ctx context.Context, ref Ref, commit, file string) (fileMeta, error) {
	hc := *c.httpClient()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	u := c.resolveURL(ref, commit, file)
	for range 10 {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
		if err != nil {
			return fileMeta{}, err
		}
		req.Header.Set("Accept-Encoding", "identity")
		c.auth(req)
		resp, err := hc.Do(req)
		if err != nil {
			return fileMeta{}, netError(ctx, ref.String()+": "+file, err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			return fileMeta{}, c.hubError(resp, ref, file, false)
		}
		m := fileMeta{file: file, url: u, size: -1}
		if resp.StatusCode >= 300 {
			loc, err := resp.Location()
			if err != nil {
				return fileMeta{}, fmt.Errorf("%s: %s: redirect without a usable Location (%v)", ref, file, err)
			}
			if raw := resp.Header.Get("Location"); !strings.Contains(raw, "://") && !strings.HasPrefix(raw, "//") {
				u = loc.String()
				continue
			}
			m.url = loc.String()
		}
		if rc := resp.Header.Get("X-Repo-Commit"); rc != "" && rc != commit {
			return fileMeta{}, fmt.Errorf("%s: %s: the Hub answered for commit %s, not %s; run again", ref, file, rc, commit)
		}
		m.etag = normalizeETag(resp.Header.Get("X-Linked-Etag"))
		if m.etag == "" {
			m.etag = normalizeETag(resp.Header.Get("ETag"))
		}
		if m.etag == "" {
			return fileMeta{}, fmt.Errorf("%s: %s: the Hub sent no ETag, so the file cannot be checked; is HF_ENDPOINT a Hub?", ref, file)
		}
		if hashKind(m.etag) == "" {
			return fileMeta{}, fmt.Errorf("%s: %s: the Hub's ETag %q is neither a sha256 nor a git SHA-1, so the file cannot be checked", ref, file, m.etag)
		}
		size := resp.Header.Get("X-Linked-Size")
		if size == "" {
			size = resp.Header.Get("Content-Length")
		}
		if n, err := strconv.ParseInt(size, 10, 64); err == nil && n >= 0 {
			m.size = n
		}
		return m, nil
	}
	return fileMeta{}, fmt.Errorf("%s: %s: too many redirects", ref, file)
}

// normalizeETag drops a weak-validator prefix and the quotes
// (huggingface_hub's _normalize_etag).
func normalizeETag(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "W/")
	return strings.Trim(s, `"`)
}
