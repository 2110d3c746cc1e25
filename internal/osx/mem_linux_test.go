//go:build linux

package osx

import "testing"

// TestMemAvailable parses /proc/meminfo's MemAvailable line, and refuses
// texts without one or with a malformed one.
func TestMemAvailable(t *testing.T) {
	for _, c := range []struct {
		text string
		want uint64
		ok   bool
	}{
		{"MemTotal:       24576000 kB\nMemFree:  100 kB\nMemAvailable:   20480000 kB\n", 20480000 << 10, true},
		{"MemAvailable: 0 kB", 0, true},
		{"MemTotal: 1 kB\n", 0, false},
		{"MemAvailable: x kB\n", 0, false},
		{"MemAvailable: 12 MB\n", 0, false},
		{"MemAvailable: 99999999999999999999 kB\n", 0, false},
	} {
		if got, ok := memAvailable([]byte(c.text)); got != c.want || ok != c.ok {
			t.Errorf("%q: %d, %v; want %d, %v", c.text, got, ok, c.want, c.ok)
		}
	}
	if n, ok := AvailableMemory(); !ok || n == 0 {
		t.Errorf("AvailableMemory on this Linux host: %d, %v", n, ok)
	}
}
