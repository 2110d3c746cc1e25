package kernels

import "testing"

func TestImpl(t *testing.T) { t.Logf("kernels: %s", Impl()) }
