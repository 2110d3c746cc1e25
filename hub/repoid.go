package hub

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultRevision is the revision used when a reference names none.
const DefaultRevision = "main"

// Ref names one revision of a model repository: "org/name" and a branch,
// tag or commit hash.
type Ref struct {
	// Repo is "org/name".
	Repo string
	// Revision is a branch, tag or 40-hex commit hash (DefaultRevision when
	// the reference gave none).
	Revision string
}

// String is "org/name@revision".
func (r Ref) String() string { return r.Repo + "@" + r.Revision }

// Name is the repository's name without its owner ("name" of "org/name"):
// the default general.name and output name of a conversion.
func (r Ref) Name() string { return r.Repo[strings.LastIndexByte(r.Repo, '/')+1:] }

// ParseRef parses "org/name" or "org/name@revision". The repository id
// follows the Hub's rule (huggingface_hub utils/_validators.py
// validate_repo_id): letters, digits, "_", "-" and "." in each part, each
// part starting and ending with a letter, digit or "_", the name at most 96
// characters, no "--" or "..". We require the owner ("org/"): a bare word is
// far more often a mistyped directory than one of the Hub's few legacy
// owner-less models. The revision may hold "/" (refs/pr/1) but, as git's
// check-ref-format rules say, no ".." or empty segment, no white space or
// control character and none of \ @ ~ ^ : ? * [. Errors say which rule
// failed.
func ParseRef(s string) (Ref, error) {
	repo, rev, hasRev := strings.Cut(s, "@")
	if hasRev {
		if err := checkRevision(rev); err != nil {
			return Ref{}, err
		}
	} else {
		rev = DefaultRevision
	}
	org, name, ok := strings.Cut(repo, "/")
	if !ok {
		return Ref{}, errors.New("a repo id is org/name")
	}
	if strings.Contains(name, "/") {
		return Ref{}, errors.New("a repo id has exactly one \"/\" (org/name)")
	}
	for _, p := range []struct{ what, s string }{{"owner", org}, {"name", name}} {
		if err := checkPart(p.s); err != nil {
			return Ref{}, fmt.Errorf("repo %s %q %v", p.what, p.s, err)
		}
	}
	if len(name) > 96 {
		return Ref{}, fmt.Errorf("repo name %q is longer than 96 characters", name)
	}
	return Ref{Repo: repo, Revision: rev}, nil
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func checkPart(s string) error {
	if s == "" {
		return errors.New("is empty")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isWord(c) && c != '-' && c != '.' {
			return fmt.Errorf("holds %q (allowed: letters, digits, _ - .)", c)
		}
	}
	if !isWord(s[0]) || !isWord(s[len(s)-1]) {
		return errors.New("must start and end with a letter, digit or _")
	}
	if strings.Contains(s, "--") || strings.Contains(s, "..") {
		return errors.New("must not contain \"--\" or \"..\"")
	}
	return nil
}

func checkRevision(rev string) error {
	if rev == "" {
		return errors.New("empty revision after \"@\"")
	}
	if len(rev) > 255 {
		return errors.New("revision longer than 255 characters")
	}
	for i := 0; i < len(rev); i++ {
		if c := rev[i]; c <= 0x20 || c == 0x7f || strings.IndexByte("\\@~^:?*[", c) >= 0 {
			return fmt.Errorf("revision %q holds %q", rev, c)
		}
	}
	// git check-ref-format's rules (git/refs.c, check_refname_component):
	// no "..", no component that is empty, starts with "." or ends in
	// ".lock", and no trailing ".".
	if strings.Contains(rev, "..") || strings.HasSuffix(rev, ".") {
		return fmt.Errorf("revision %q holds \"..\" or ends in \".\" (git refuses such ref names)", rev)
	}
	for _, seg := range strings.Split(rev, "/") {
		if seg == "" || seg[0] == '.' || strings.HasSuffix(seg, ".lock") {
			return fmt.Errorf("revision %q has an empty segment, one starting with \".\" or ending in \".lock\"", rev)
		}
	}
	return nil
}

// IsCommit reports whether rev is a full commit hash (40 lower-case hex
// digits), which names a snapshot directly and gets no refs/ file.
func IsCommit(rev string) bool {
	if len(rev) != 40 {
		return false
	}
	for i := 0; i < len(rev); i++ {
		if c := rev[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
