// Package run is the `bitnet-convert run` command: greedy (or sampled)
// generation with the pure-Go runtime, one token per call, optionally
// dumping every row of logits in the golden files' layout.
package run
