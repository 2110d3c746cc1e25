#!/usr/bin/env bash
# Runs every parser fuzz target of issue 7 and the kernel targets of issues 15 and 12 briefly, one target per
# `go test -fuzz` invocation, starting from its seed corpus (f.Add seeds plus
# the package's testdata/fuzz/<Target>/). Exits non-zero when any target
# fails; go test then prints the failing input and writes it under the
# package's testdata/fuzz/<Target>/ so `go test ./pkg` replays it.
#
# Budgets are execution counts (-fuzztime Nx), sized for a few seconds per
# target on 2 cores, not durations: with a duration, Go 1.26's fuzz
# coordinator can fail a target with a spurious "context deadline exceeded"
# at the deadline (golang/go#75804, fixed in Go 1.27). Minimisation of a new
# input is capped the same way (-fuzzminimizetime), so no target stalls on it.
#
# FUZZTIME overrides every budget, e.g. the long run of docs/fuzzing.md:
#   FUZZTIME=2000000x scripts/fuzz-brief.sh
set -uo pipefail
cd "$(dirname "$0")/.."

# package                 target                  executions
targets=(
  "./hf                              FuzzSafetensorsHeader   400000"
  "./gguf/reader                     FuzzParse               400000"
  "./hf                              FuzzConfig              300000"
  "./tokenizer                       FuzzTokenizerJSON       200000"
  "./tokenizer                       FuzzSentencePieceModel  200000"
  "./codegen                         FuzzKernelConfig        120000"
  "./cmd/bitnet-convert/cli/idlist   FuzzParse               160000"
  "./cmd/bitnet-convert/cli/codegen  FuzzParseList           120000"
  "./cmd/bitnet-convert/cli/hf2gguf  FuzzReadMetadata        16000"
  "./hub                             FuzzParseRef            100000"
  "./hub                             FuzzParseIndexShards    100000"
  "./internal/kernels                FuzzDotI2S              100000"
  "./internal/kernels                FuzzDotI2SBatch         40000"
  "./internal/kernels                FuzzDotF16              100000"
  "./internal/kernels                FuzzQuantizeI8S         100000"
  "./internal/kernels                FuzzConverterKernels    60000"
  "./internal/kernels                FuzzTernarySums         60000"
  "./internal/kernels                FuzzTinyBLAS            60000"
  "./runtime                         FuzzQ8KTypes            20000"
  "./runtime                         FuzzReadKLBaseHeader    100000"
  "./runtime                         FuzzLoadQwen            40000"
  "./torchpt                         FuzzParse               40000"
  "./convert                         FuzzGroupTernary        60000"
)

failed=()
start=$SECONDS
for line in "${targets[@]}"; do
  read -r pkg target count <<<"$line"
  budget="${FUZZTIME:-${count}x}"
  echo "== $target ($pkg, $budget)"
  if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$budget" -fuzzminimizetime 2000x "$pkg"; then
    failed+=("$pkg $target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz-brief: ${#failed[@]} target(s) failed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz-brief: ${#targets[@]} targets, no failures, $((SECONDS - start)) s"
