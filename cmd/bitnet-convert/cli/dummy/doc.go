// Package dummy is the `bitnet-convert dummy` command: a Hugging Face
// checkpoint of a real model's shape (from a preset or a config.json) with
// seeded random weights, for testing and benchmarking conversions at full
// size without downloading gigabytes. The work is in package
// github.com/bitnet-convert/bitnet-convert/dummy; this package only parses
// flags (NewCmdDummy) and reports (dummyRun).
package dummy
