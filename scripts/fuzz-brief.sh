#!/usr/bin/env bash
# Runs every parser fuzz target of issue 7 briefly (FUZZTIME each, default 5s),
# one target per `go test -fuzz` invocation, against its seed corpus (f.Add
# seeds plus testdata/fuzz/<Target>/). Exits non-zero when any target fails;
# go test then prints the failing input and writes it under the package's
# testdata/fuzz/<Target>/ so `go test ./pkg` replays it.
#
# The long run (>= 1M executions per target) is recorded in docs/fuzzing.md:
#   FUZZTIME=1000000x scripts/fuzz-brief.sh
set -uo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-5s}"

# package  target   (one line each; the parsers of issue 7 first)
targets=(
  "./hf                    FuzzSafetensorsHeader"
  "./gguf/reader           FuzzParse"
  "./hf                    FuzzConfig"
  "./tokenizer             FuzzTokenizerJSON"
  "./tokenizer             FuzzSentencePieceModel"
  "./codegen               FuzzKernelConfig"
  "./internal/cli/verify   FuzzParseIDs"
  "./internal/cli/run      FuzzParseIDs"
  "./internal/cli/codegen  FuzzParseList"
  "./internal/cli/hf2gguf  FuzzReadMetadata"
)

failed=()
for line in "${targets[@]}"; do
  read -r pkg target <<<"$line"
  echo "== $target ($pkg, $fuzztime)"
  if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"; then
    failed+=("$pkg $target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz-brief: ${#failed[@]} target(s) failed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz-brief: ${#targets[@]} targets, no failures"
