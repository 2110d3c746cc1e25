//go:build unix

package dummy

import "golang.org/x/sys/unix"

// statfsFree returns Bavail × Bsize of the filesystem holding path.
func statfsFree(path string) (uint64, bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, false, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true, nil
}
