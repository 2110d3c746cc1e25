//go:build linux

package osx

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// AvailableMemory returns the memory available for new allocations, in
// bytes: the kernel's estimate without swapping (MemAvailable of
// /proc/meminfo, proc(5)), or less when the process's memory cgroup (v2
// memory.max, or v1 memory.limit_in_bytes) leaves less room above what
// the cgroup already uses. It reports false when /proc/meminfo cannot be
// read.
func AvailableMemory() (uint64, bool) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	avail, ok := memAvailable(data)
	if !ok {
		return 0, false
	}
	if cg, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		if room, ok := cgroupRoom(string(cg), "/sys/fs/cgroup"); ok {
			avail = min(avail, room)
		}
	}
	return avail, true
}

// memAvailable parses the MemAvailable line ("MemAvailable:  123 kB") of
// a /proc/meminfo text.
func memAvailable(data []byte) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == "MemAvailable:" && string(f[2]) == "kB" {
			kb, err := strconv.ParseUint(string(f[1]), 10, 64)
			if err != nil || kb > 1<<54 {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}

// cgroupRoom returns a memory cgroup's limit minus its usage, for the
// process whose /proc/self/cgroup text is cg, with the cgroup file system
// at root: the v2 line "0::PATH" (PATH/memory.max, memory.current) or the
// v1 line "N:memory:PATH" (memory/PATH/memory.limit_in_bytes,
// memory.usage_in_bytes). No limit ("max", or v1's near-2^63 value) or
// unreadable files give false.
func cgroupRoom(cg, root string) (uint64, bool) {
	for _, line := range strings.Split(cg, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var limitFile, usageFile string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir := filepath.Join(root, parts[2])
			limitFile, usageFile = filepath.Join(dir, "memory.max"), filepath.Join(dir, "memory.current")
		case strings.Contains(","+parts[1]+",", ",memory,"):
			dir := filepath.Join(root, "memory", parts[2])
			limitFile, usageFile = filepath.Join(dir, "memory.limit_in_bytes"), filepath.Join(dir, "memory.usage_in_bytes")
		default:
			continue
		}
		limit, ok1 := readUint(limitFile)
		usage, ok2 := readUint(usageFile)
		if !ok1 || !ok2 || limit >= 1<<62 {
			continue
		}
		if usage >= limit {
			return 0, true
		}
		return limit - usage, true
	}
	return 0, false
}

// readUint reads a file holding one decimal number ("max" is not one).
func readUint(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}
