package fsutil_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// A FIFO named like an input file is refused before it is opened (opening
// it would block until a writer appears).
func ExampleCheckRegular() {
	dir, _ := os.MkdirTemp("", "fsutil-example-")
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.json")
	_ = osx.Mkfifo(cfg)

	err := fsutil.CheckRegular(cfg)
	fmt.Println(errors.Is(err, fsutil.ErrNotRegular))
	fmt.Println(strings.TrimPrefix(err.Error(), dir+string(filepath.Separator)))

	os.Remove(cfg)
	_ = os.WriteFile(cfg, []byte("{}"), 0o644)
	data, err := fsutil.ReadFile(cfg)
	fmt.Println(string(data), err)
	// Output:
	// true
	// config.json is a named pipe (FIFO), not a regular file; point the tool at a regular file
	// {} <nil>
}
