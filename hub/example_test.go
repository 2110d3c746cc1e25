package hub_test

import (
	"fmt"
	"path/filepath"

	"github.com/bitnet-convert/bitnet-convert/hub"
)

// A repo id names the repository, its revision and where the cache keeps it.
func Example() {
	ref, err := hub.ParseRef("microsoft/bitnet-b1.58-2B-4T@main")
	if err != nil {
		panic(err)
	}
	cfg, _ := hub.ConfigFromEnv(func(k string) string {
		return map[string]string{"HF_HOME": "/data/hf"}[k]
	})
	fmt.Println(ref.Repo, ref.Revision, ref.Name())
	fmt.Println(filepath.ToSlash(cfg.RepoDir(ref.Repo)))
	fmt.Println(cfg.Endpoint)
	// Output:
	// microsoft/bitnet-b1.58-2B-4T main bitnet-b1.58-2B-4T
	// /data/hf/hub/models--microsoft--bitnet-b1.58-2B-4T
	// https://huggingface.co
}
