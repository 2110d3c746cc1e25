// Package badinput holds the reliability tests (docs/reliability.md); it has no
// non-test code.
//
// The tests feed the whole command line (cli.Main, and the built binary
// where a process must be killed or limited) with broken inputs and check
// the promises every command makes: exit code 1 (bad data) or 2 (bad
// usage), exactly one stderr line naming the file, tensor or flag, no file
// at the output path and no temp file beside it, and input files byte for
// byte unchanged.
//
//   - corpus_test.go: the table of bad inputs (TestCorpus): truncated and
//     inconsistent safetensors and GGUF files, headers that claim 2^60
//     elements, keys or bytes (they must fail before allocating), NaN/Inf
//     weights, rows that do not fit the I2_S block, missing or unreadable
//     tokenizers and configs, unknown architectures, bad shard indexes and
//     links, outputs that cannot be created, and bad flags of hf2gguf,
//     inspect, verify, tokenize, run and codegen.
//   - disk_test.go: a writer that fails midway (a full tmpfs when mount is
//     allowed, RLIMIT_FSIZE always, an injected failing io.Writer) and an
//     interrupt (context cancellation, SIGINT) during writing.
//   - offsets64_test.go: BR-28a/b through the CLI (a tensor past 4 GiB in a
//     sparse GGUF and a sparse safetensors file).
//   - kill_test.go: SIGKILL while the converter writes; the target keeps
//     nothing or the previous file, and the next run removes the leftover
//     temp file.
//   - defects2_test.go, defects2_unix_test.go: the second hostile run's
//     defects (H1–H23, H29 of issue 24), one row or test each: a mapped
//     input that shrinks (H1), --force onto a secondary input (H2), two
//     writers of one output (H3), the output mode and the umask (H9),
//     run's memory (H10), lost stdout (H11), signals and exit codes (H12,
//     H29), write errors (H13), messages (H14–H17, H22, H23), ignored
//     flags (H18), --dry-run on a read-only filesystem (H19, in
//     disk_linux_test.go), trailing 1-dims (H20) and "-" (H21).
//   - memory_test.go: peak RSS of a conversion (the figure /usr/bin/time -v
//     reports, from wait4's rusage) on one large tensor, and the BR-23 bound
//     (512 MB) on the bitnet_b1_58-large shapes with BITNET_HEAVY=1.
//
// Every case is built from things root cannot get past (CI runs as root):
// paths under regular files, size limits, injected writers, dangling links —
// never file permissions.
package badinput
