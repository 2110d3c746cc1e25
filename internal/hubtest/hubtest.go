// Package hubtest is a Hugging Face Hub stand-in for tests only (like
// net/http/httptest; no command imports it): a loopback server speaking the
// download protocol package hub uses, plus a second loopback server playing
// the blob host large files are redirected to. It answers
//   - GET /api/models/{org}/{name}/revision/{rev}[?blobs=true] with the
//     model-info JSON ("sha", "siblings" with "rfilename", "size", "lfs");
//   - HEAD and GET /{org}/{name}/resolve/{rev}/{file}: for a small file 200
//     with ETag (the git blob SHA-1), X-Repo-Commit and the bytes; for an
//     LFS file 302 to the blob host with X-Linked-Etag (sha256),
//     X-Linked-Size and X-Repo-Commit;
//   - GET {blob host}/blobs/{sha256}: the bytes, honouring Range: bytes=N-
//     with 206 and Content-Range;
//   - errors as the Hub sends them: 401 X-Error-Code RepoNotFound (unknown
//     repository), 404 RevisionNotFound, 404 EntryNotFound, 401/403
//     GatedRepo (a gated repository without / with a token lacking access).
//
// Faults for tests: Drop cuts the connection half-way through a file's
// bytes a given number of times; Corrupt serves bytes that do not match the
// hash the headers report; Unavailable answers 503; Rename moves a
// repository, answering the old id with a relative 307.
package hubtest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// Repo is one model repository the server holds.
type Repo struct {
	// Commit is the 40-hex commit "main" resolves to.
	Commit string
	// Files maps repository paths to contents.
	Files map[string][]byte
	// LFS lists the files stored in LFS (redirected to the blob host,
	// checked by sha256); the others are checked by their git blob SHA-1.
	LFS map[string]bool
	// Gated requires one of Tokens.
	Gated bool
	// Tokens are the bearer tokens with access to a gated repository.
	Tokens []string
}

// Request is one request the servers saw.
type Request struct {
	Method, Path, Range string
	// Auth is the Authorization header.
	Auth string
	// Blob is true for the blob host.
	Blob bool
}

// Server is the Hub and its blob host.
type Server struct {
	// Hub is the endpoint (HF_ENDPOINT = Hub.URL).
	Hub *httptest.Server
	// Blobs is the blob host LFS files redirect to.
	Blobs *httptest.Server

	mu      sync.Mutex
	repos   map[string]*Repo
	blobs   map[string][]byte // sha256 → bytes
	drops   map[string]int    // file → connections left to cut
	corrupt map[string]bool
	fail    map[string]int    // file → 503 answers left
	renamed map[string]string // old id → new id
	log     []Request
}

// New starts both servers; Close stops them.
func New() *Server {
	s := &Server{repos: map[string]*Repo{}, blobs: map[string][]byte{}, drops: map[string]int{}, corrupt: map[string]bool{},
		fail: map[string]int{}, renamed: map[string]string{}}
	s.Hub = httptest.NewServer(http.HandlerFunc(s.serveHub))
	s.Blobs = httptest.NewServer(http.HandlerFunc(s.serveBlob))
	return s
}

// Close stops both servers.
func (s *Server) Close() {
	s.Hub.Close()
	s.Blobs.Close()
}

// Add publishes repo under id ("org/name").
func (s *Server) Add(id string, r *Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[id] = r
	for f, b := range r.Files {
		if r.LFS[f] {
			s.blobs[SHA256(b)] = b
		}
	}
}

// Drop makes the next n transfers of file (by its path in any repository)
// stop half-way with the connection closed.
func (s *Server) Drop(file string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops[file] = n
}

// Corrupt makes the server send other bytes than file's hash says.
func (s *Server) Corrupt(file string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.corrupt[file] = true
}

// Unavailable makes the next n GETs of file's bytes answer 503.
func (s *Server) Unavailable(file string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[file] = n
}

// Rename moves repository old to id new: requests for old get a 307 with a
// relative Location, as the Hub answers for a renamed repository.
func (s *Server) Rename(old, new string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[new] = s.repos[old]
	delete(s.repos, old)
	s.renamed[old] = new
}

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// SHA256 is the hex sha256 of b (an LFS file's X-Linked-Etag).
func SHA256(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// GitSHA1 is the git blob SHA-1 of b (a small file's ETag).
func GitSHA1(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Server) record(r *http.Request, blob bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization"), Blob: blob})
}

func hubErr(w http.ResponseWriter, status int, code string) {
	w.Header().Set("X-Error-Code", code)
	w.Header().Set("X-Error-Message", code)
	http.Error(w, code, status)
}

// lookup finds the repository and the commit of rev; ok false after it
// has answered with the error.
func (s *Server) lookup(w http.ResponseWriter, req *http.Request, id, rev string) (*Repo, bool) {
	s.mu.Lock()
	r := s.repos[id]
	s.mu.Unlock()
	if r == nil {
		s.mu.Lock()
		to, moved := s.renamed[id]
		s.mu.Unlock()
		if moved {
			w.Header().Set("Location", strings.Replace(req.URL.RequestURI(), "/"+id+"/", "/"+to+"/", 1))
			w.WriteHeader(http.StatusTemporaryRedirect)
			return nil, false
		}
		hubErr(w, http.StatusUnauthorized, "RepoNotFound")
		return nil, false
	}
	if rev != "main" && rev != r.Commit {
		hubErr(w, http.StatusNotFound, "RevisionNotFound")
		return nil, false
	}
	return r, true
}

func (s *Server) serveHub(w http.ResponseWriter, req *http.Request) {
	s.record(req, false)
	p := req.URL.Path
	if rest, ok := strings.CutPrefix(p, "/api/models/"); ok {
		parts := strings.SplitN(rest, "/", 4)
		if len(parts) != 4 || parts[2] != "revision" || req.Method != http.MethodGet {
			http.NotFound(w, req)
			return
		}
		r, ok := s.lookup(w, req, parts[0]+"/"+parts[1], parts[3])
		if !ok {
			return
		}
		type lfs struct {
			SHA256 string `json:"sha256"`
			Size   int    `json:"size"`
		}
		type sib struct {
			RFilename string `json:"rfilename"`
			Size      int    `json:"size"`
			LFS       *lfs   `json:"lfs,omitempty"`
		}
		info := struct {
			ID       string `json:"id"`
			SHA      string `json:"sha"`
			Gated    bool   `json:"gated"`
			Siblings []sib  `json:"siblings"`
		}{ID: parts[0] + "/" + parts[1], SHA: r.Commit, Gated: r.Gated}
		for f, b := range r.Files {
			sb := sib{RFilename: f, Size: len(b)}
			if r.LFS[f] {
				sb.LFS = &lfs{SHA256: SHA256(b), Size: len(b)}
			}
			info.Siblings = append(info.Siblings, sb)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(info)
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 5)
	if len(parts) != 5 || parts[2] != "resolve" {
		http.NotFound(w, req)
		return
	}
	r, ok := s.lookup(w, req, parts[0]+"/"+parts[1], parts[3])
	if !ok {
		return
	}
	if r.Gated {
		tok, has := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		allowed := false
		for _, t := range r.Tokens {
			allowed = allowed || (has && t == tok)
		}
		if !has {
			hubErr(w, http.StatusUnauthorized, "GatedRepo")
			return
		}
		if !allowed {
			hubErr(w, http.StatusForbidden, "GatedRepo")
			return
		}
	}
	file := parts[4]
	b, ok := r.Files[file]
	if !ok {
		hubErr(w, http.StatusNotFound, "EntryNotFound")
		return
	}
	w.Header().Set("X-Repo-Commit", r.Commit)
	if r.LFS[file] {
		sum := SHA256(b)
		w.Header().Set("X-Linked-Etag", `"`+sum+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(b)))
		w.Header().Set("ETag", `W/"pointer-`+GitSHA1([]byte(sum))[:8]+`"`)
		w.Header().Set("Location", s.Blobs.URL+"/blobs/"+sum+"?file="+file)
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+GitSHA1(b)+`"`)
	s.serveBytes(w, req, file, b)
}

func (s *Server) serveBlob(w http.ResponseWriter, req *http.Request) {
	s.record(req, true)
	sum, ok := strings.CutPrefix(req.URL.Path, "/blobs/")
	s.mu.Lock()
	b, found := s.blobs[sum]
	s.mu.Unlock()
	if !ok || !found {
		http.NotFound(w, req)
		return
	}
	s.serveBytes(w, req, req.URL.Query().Get("file"), b)
}

// serveBytes sends b (from the Range start if one is asked), applying the
// faults set for file.
func (s *Server) serveBytes(w http.ResponseWriter, req *http.Request, file string, b []byte) {
	s.mu.Lock()
	if s.corrupt[file] {
		b = append([]byte(nil), b...)
		b[len(b)/2] ^= 0x55
	}
	drop := req.Method == http.MethodGet && s.drops[file] > 0
	if drop {
		s.drops[file]--
	}
	unavailable := req.Method == http.MethodGet && s.fail[file] > 0
	if unavailable {
		s.fail[file]--
	}
	s.mu.Unlock()
	if unavailable {
		http.Error(w, "try later", http.StatusServiceUnavailable)
		return
	}
	start := 0
	if rg := req.Header.Get("Range"); rg != "" {
		a, ok := strings.CutPrefix(rg, "bytes=")
		a, _, _ = strings.Cut(a, "-")
		n, err := strconv.Atoi(a)
		if !ok || err != nil || n < 0 {
			http.Error(w, "bad range", http.StatusBadRequest)
			return
		}
		if n >= len(b) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(b)))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start = n
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", n, len(b)-1, len(b)))
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)-start))
	w.Header().Set("Accept-Ranges", "bytes")
	if start > 0 {
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.WriteHeader(http.StatusOK)
	}
	if req.Method == http.MethodHead {
		return
	}
	body := b[start:]
	if drop {
		_, _ = w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	_, _ = w.Write(body)
}
