// Package hub downloads the files of a Hugging Face model repository that a
// conversion needs into the Hugging Face cache, using net/http only.
//
// Protocol (facts from huggingface_hub's file_download.py, hf_api.py,
// constants.py and utils/_http.py; the code here is our own):
//   - The file list and the commit come from the model-info endpoint
//     GET {endpoint}/api/models/{org}/{name}/revision/{rev}?blobs=true
//     (JSON: "sha" is the commit, "siblings"[].rfilename the files, with
//     "size" and, for LFS files, "lfs".sha256).
//   - Each file is asked for with HEAD {endpoint}/{org}/{name}/resolve/{commit}/{file}
//     without following a redirect to another host. The answer carries
//     X-Repo-Commit (the commit), X-Linked-Etag (the LFS sha256 of a file
//     stored in LFS; else ETag, the git blob SHA-1), X-Linked-Size (else
//     Content-Length) and, for a redirect, Location (the blob host). The
//     bytes come from a GET of that location; a restart sends
//     Range: bytes=N- and expects 206.
//   - Errors carry X-Error-Code: RepoNotFound, RevisionNotFound,
//     EntryNotFound, GatedRepo. A 401 on the API means the repository does not
//     exist or is private (the Hub does not tell which); 403 with GatedRepo
//     means a token without access to a gated repository.
//   - The token is sent as "Authorization: Bearer TOKEN" to the endpoint's
//     host only, never to the blob host.
//
// Cache layout (huggingface_hub's "cache-system"): the cache directory is
// $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
// else ~/.cache/huggingface/hub. A repository org/name lives in
// models--org--name/ with
//   - blobs/<etag>: the file's bytes, named by the hash the Hub reports
//     (64 hex digits: sha256; 40: git blob SHA-1); blobs/<etag>.incomplete
//     while downloading (kept across runs, resumed with a Range request);
//   - snapshots/<commit>/<file>: a relative symlink to ../../blobs/<etag>
//     (a copy where the system refuses symlinks);
//   - refs/<branch or tag>: the commit it resolved to (not written when the
//     revision is a commit hash);
//   - and, beside the repositories, .locks/models--org--name/<etag>.lock,
//     locked with flock(2) while the blob is written, as huggingface_hub's
//     filelock does on Unix, so two tools never write one blob at once
//     (not locked on Windows, where such a blob fails its hash check).
//
// Files downloaded by other tools are reused, and ours are reused by them.
// Every blob is checked against its name's hash before it is used, in the
// cache or freshly downloaded; a mismatching download stays
// blobs/<etag>.incomplete and is never linked into a snapshot.
//
// Environment (Config.FromEnv): HF_ENDPOINT (default https://huggingface.co,
// for mirrors), HF_TOKEN (else the file $HF_TOKEN_PATH, else $HF_HOME/token),
// HF_HUB_OFFLINE (1/ON/YES/TRUE: use only the cache), HF_HUB_CACHE, HF_HOME,
// XDG_CACHE_HOME.
//
// Errors are one line naming the repository, revision or file and what to do;
// they wrap the sentinels ErrRepoNotFound, ErrGated, ErrRevisionNotFound,
// ErrNetwork, ErrDiskFull, ErrHashMismatch and ErrNotCached for errors.Is.
package hub
