package hub

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinels wrapped by the errors of this package, for errors.Is.
var (
	// ErrRepoNotFound: the Hub knows no such repository (or it is private
	// and the token, if any, has no access: the Hub answers both alike).
	ErrRepoNotFound = errors.New("repository not found")
	// ErrGated: a gated repository whose terms the token's user has not
	// accepted, or no token at all.
	ErrGated = errors.New("gated repository")
	// ErrRevisionNotFound: no such branch, tag or commit.
	ErrRevisionNotFound = errors.New("revision not found")
	// ErrNetwork: the Hub (or its blob host) could not be reached, or the
	// connection broke more often than the retries allow.
	ErrNetwork = errors.New("network error")
	// ErrDiskFull: the cache's file system is full.
	ErrDiskFull = errors.New("disk full")
	// ErrHashMismatch: a blob's bytes do not have the hash the Hub reports.
	ErrHashMismatch = errors.New("hash mismatch")
	// ErrNotCached: offline, and the cache does not hold the revision.
	ErrNotCached = errors.New("not in the cache")
)

// cacheWriteError describes a failed write into the cache, naming a full
// disk as such.
func cacheWriteError(path string, err error) error {
	if isDiskFull(err) {
		return tagf(ErrDiskFull, "disk full writing %s: free space or point HF_HUB_CACHE at another disk (a partial download is kept and resumed)", path)
	}
	return fmt.Errorf("write %s: %w", path, err)
}

// hubError turns a Hub error answer into one line. what is the request's
// subject ("org/name@rev", "org/name@rev: config.json"); api reports a
// model-info request (where a 401 means "no such repository or private").
// The rules are huggingface_hub utils/_http.py hf_raise_for_status's:
// X-Error-Code first, then the status.
func (c *Client) hubError(resp *http.Response, ref Ref, file string, api bool) error {
	code := resp.Header.Get("X-Error-Code")
	msg := oneLine(resp.Header.Get("X-Error-Message"))
	subject := ref.String()
	if file != "" {
		subject += ": " + file
	}
	auth := "no token was sent (set HF_TOKEN or log in with `hf auth login`)"
	if c.Token != "" {
		auth = "the token from " + c.TokenSource + " was sent"
	}
	switch {
	case code == "GatedRepo":
		return tagf(ErrGated, "%s is a gated repository: accept its terms at %s/%s, then use a token of that account; %s (HTTP %d)",
			ref.Repo, c.Endpoint, ref.Repo, auth, resp.StatusCode)
	case code == "RevisionNotFound":
		return tagf(ErrRevisionNotFound, "revision %q not found in %s (HTTP %d): give a branch, tag or commit of the repository", ref.Revision, ref.Repo, resp.StatusCode)
	case code == "EntryNotFound":
		return fmt.Errorf("%s: the Hub lists the file but does not serve it (HTTP %d)", subject, resp.StatusCode)
	case code == "RepoNotFound" || (api && resp.StatusCode == http.StatusUnauthorized) || (api && resp.StatusCode == http.StatusNotFound):
		return tagf(ErrRepoNotFound, "repository %s not found at %s, or it is private and %s (HTTP %d)", ref.Repo, c.Endpoint, auth, resp.StatusCode)
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s: unauthorized; %s (HTTP 401)", subject, auth)
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s: forbidden; %s (HTTP 403)%s", subject, auth, suffix(msg))
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s: not found (HTTP 404)%s", subject, suffix(msg))
	}
	return tagf(ErrNetwork, "%s: download failed, the Hub answered HTTP %d%s: try again later, or set HF_HUB_OFFLINE=1 to use the cached copy", subject, resp.StatusCode, suffix(msg))
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return " (" + msg + ")"
}

// oneLine keeps a server-supplied message on one line and short.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.TrimSpace(s)
}

// tagged is an error whose message says what failed and what to do, and
// which errors.Is matches to its sentinel without the message ending in the
// sentinel's words (": network error" after "check the connection" told
// the user nothing more).
type tagged struct {
	msg string
	tag error
}

func (e *tagged) Error() string        { return e.msg }
func (e *tagged) Is(target error) bool { return target == e.tag }

// tagf formats a message (fmt.Sprintf) tagged with the sentinel tag.
func tagf(tag error, format string, args ...any) error {
	return &tagged{msg: fmt.Sprintf(format, args...), tag: tag}
}
