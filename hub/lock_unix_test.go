//go:build unix

package hub

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/internal/hubtest"
)

// TestDownloadWaitsForTheBlobLock: while another process (huggingface_hub)
// holds .locks/models--org--name/<etag>.lock, the blob is not written.
func TestDownloadWaitsForTheBlobLock(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	repo := testRepo()
	s.Add("org/name", repo)
	c := newClient(t, s)
	locks := filepath.Join(c.CacheDir, ".locks", "models--org--name")
	if err := os.MkdirAll(locks, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockFile(context.Background(), filepath.Join(locks, hubtest.GitSHA1(repo.Files["config.json"])+".lock"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = c.Download(ctx, Ref{Repo: "org/name", Revision: "main"}, false)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with the lock held elsewhere: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.CacheDir, "models--org--name", "blobs", hubtest.GitSHA1(repo.Files["config.json"])+".incomplete")); err == nil {
		t.Error("the blob was written while locked")
	}
	unlock()
	if _, err := c.Download(context.Background(), Ref{Repo: "org/name", Revision: "main"}, false); err != nil {
		t.Fatal(err)
	}
}
