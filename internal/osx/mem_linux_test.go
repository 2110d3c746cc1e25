//go:build linux

package osx

import (
	"os"
	"path/filepath"
	"testing"
)

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

// TestCgroupRoom: a v2 cgroup's memory.max − memory.current, a v1 memory
// controller's limit − usage, none for "max" or v1's unlimited value, and
// 0 for a cgroup at its limit.
func TestCgroupRoom(t *testing.T) {
	root := t.TempDir()
	write := func(dir string, files map[string]string) {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range files {
			if err := os.WriteFile(filepath.Join(root, dir, name), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("a", map[string]string{"memory.max": "1073741824\n", "memory.current": "73741824\n"})
	write("b", map[string]string{"memory.max": "max\n", "memory.current": "5\n"})
	write("memory/c", map[string]string{"memory.limit_in_bytes": "9223372036854771712\n", "memory.usage_in_bytes": "1\n"})
	write("memory/d", map[string]string{"memory.limit_in_bytes": "2000\n", "memory.usage_in_bytes": "500\n"})
	write("memory/e", map[string]string{"memory.limit_in_bytes": "2000\n", "memory.usage_in_bytes": "2500\n"})
	for _, c := range []struct {
		cg   string
		want uint64
		ok   bool
	}{
		{"0::/a\n", 1<<30 - 73741824, true},
		{"0::/b\n", 0, false},
		{"4:memory:/c\n0::/\n", 0, false},
		{"9:name=systemd:/\n4:memory:/d\n0::/\n", 1500, true},
		{"4:cpu,memory:/e\n", 0, true},
		{"0::/missing\n", 0, false},
		{"", 0, false},
	} {
		if got, ok := cgroupRoom(c.cg, root); got != c.want || ok != c.ok {
			t.Errorf("%q: %d, %v; want %d, %v", c.cg, got, ok, c.want, c.ok)
		}
	}
}
