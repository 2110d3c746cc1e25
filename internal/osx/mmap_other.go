//go:build !unix && !windows

package osx

import (
	"errors"
	"os"
)

func mmap(*os.File, int) ([]byte, func() error, error) { return nil, nil, errors.ErrUnsupported }

func release([]byte) {}
