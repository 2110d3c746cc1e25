package summary

import "os"

// Warnings of a plan print as notices; one that already says "notice: "
// is not doubled.
func ExampleNotices() {
	Notices(os.Stdout, []string{
		"config.json sliding_window 4096 is not written",
		"notice: kept in full precision",
	})
	// Output:
	// bitnet-convert: notice: config.json sliding_window 4096 is not written
	// bitnet-convert: notice: kept in full precision
}
