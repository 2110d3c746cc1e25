#!/usr/bin/env bash
# Records testdata/golden/mainline-home: mainline llama.cpp (ggml-org/llama.cpp 3f545bec, the AVX2 build of
# docs/reference-runtimes.md "Mainline llama.cpp") runs our files and its own Q2_0 files of the test models, and
# this script writes what it computed (greedy ids, sha256 of the logits, sha256 of the files) as mainline-home.json.
#
#   scripts/mainline-home.sh BIN OUT [MODEL...]
#
# BIN holds the two programs built against that build's shared libraries (docs/reference-runtimes.md):
# oracle-dump (one token per llama_decode; --batch: the prompt in one call) and quantize-q2_0 (llama_model_quantize
# with the parameters of `llama-quantize --token-embedding-type f16 --output-tensor-type f16 IN OUT Q2_0`).
# OUT is a scratch folder: the inputs (written by runtime's TestWriteMainlineHomeFiles), mainline's Q2_0 files
# (OUT/ml/), the raw logits (OUT/runs/) and OUT/mainline-home.json, which replaces the golden file once checked
# (`git diff` shows what changed; runs of an unchanged file must keep their hashes).
# MODEL limits the models (default: every model TestWriteMainlineHomeFiles writes); the g128 files are always
# included. Each run: both prompts of the README, 16 greedy tokens, -t 1, flash attention on, F16 K/V cache.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 BIN OUT [MODEL...]" >&2; exit 2; }
BIN=$(cd "$1" && pwd); OUT=$(mkdir -p "$2" && cd "$2" && pwd); shift 2
for p in oracle-dump quantize-q2_0; do
  [ -x "$BIN/$p" ] || { echo "$0: $BIN/$p not found or not executable: build it as docs/reference-runtimes.md says" >&2; exit 1; }
done
export BITNET_MAINLINE_HOME_OUT=$OUT BITNET_MAINLINE_HOME_MODELS="${*:-}"
go test ./runtime -run '^TestWriteMainlineHomeFiles$' -count=1 >"$OUT/write.log" 2>&1 || { cat "$OUT/write.log" >&2; exit 1; }

HELLO=1,413,480,414,271,417,313,269,421,427,457,360,314,411,280,262,261,437,413,461,268,469,316,262,414,284,432
IDS=1,100,200,300,400,500,7,8
mkdir -p "$OUT/ml" "$OUT/runs"
: >"$OUT/files.tsv"; : >"$OUT/runs.tsv"

# kind: ours (a file we wrote: TQ1_0/TQ2_0, and Q2_0 where the model has no F32, e.g. the group-scaled one and our
# requant of the g128 file), ml (mainline's Q2_0 of our F32), refused (mainline must refuse it)
files=()
for f in "$OUT"/*-f32.gguf; do
  m=$(basename "$f" -f32.gguf)
  "$BIN/quantize-q2_0" "$f" "$OUT/ml/$m-q2_0.gguf" >"$OUT/ml/$m-q2_0.log" 2>&1 || { cat "$OUT/ml/$m-q2_0.log" >&2; exit 1; }
  files+=("ml $m-q2_0 $OUT/ml/$m-q2_0.gguf")
done
for f in "$OUT"/*-tq1_0.gguf "$OUT"/*-tq2_0.gguf "$OUT"/*-q2_0.gguf; do
  # our Q2_0 files: those of models without an F32 (mainline's Q2_0 stands for the others)
  case $f in *-q2_0.gguf) [ -e "${f%-q2_0.gguf}-f32.gguf" ] && continue;; esac
  [ -e "$f" ] && files+=("ours $(basename "$f" .gguf) $f")
done
[ -e "$OUT/tiny-g128.gguf" ] && files+=("refused tiny-g128 $OUT/tiny-g128.gguf")

for e in "${files[@]}"; do
  read -r kind name path <<<"$e"
  printf '%s\t%s\t%s\t%s\n' "$name" "$kind" "$(sha256sum "$path" | cut -d' ' -f1)" "$path" >>"$OUT/files.tsv"
  if [ "$kind" = refused ]; then
    if "$BIN/oracle-dump" -m "$path" --ids "$IDS" -n 16 -t 1 --fa on -o "$OUT/runs/$name.f32" >"$OUT/runs/$name.log" 2>&1; then
      echo "$0: mainline loaded $name, which it must refuse" >&2; exit 1
    fi
    continue
  fi
  for prompt in hello ids; do
    ids=$HELLO; [ $prompt = ids ] && ids=$IDS
    for mode in seq batch; do
      o="$OUT/runs/$name.$prompt.$mode"
      flag=(); [ $mode = batch ] && flag=(--batch)
      "$BIN/oracle-dump" -m "$path" --ids "$ids" -n 16 -t 1 --fa on "${flag[@]}" -o "$o.f32" >"$o.log" 2>&1 ||
        { cat "$o.log" >&2; exit 1; }
      gen=$(sed -n 's/^gen: //p' "$o.log")
      printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$prompt" "$mode" "$gen" "$(sha256sum "$o.f32" | cut -d' ' -f1)" >>"$OUT/runs.tsv"
    done
  done
done

# mainline-home.json: files (sha256; the tensor data hashes of mainline's own Q2_0 files; the load error of the
# refused one), then runs ordered by file, prompt, mode (seq first).
go build -o "$OUT/bitnet-convert" ./cmd/bitnet-convert
python3 - "$OUT" <<'EOF'
import hashlib, json, subprocess, sys
out = sys.argv[1]
files, runs = {}, []
for line in open(f"{out}/files.tsv"):
    name, kind, sha, path = line.rstrip("\n").split("\t")
    e = {"sha256": sha}
    if kind == "ml":
        info = json.loads(subprocess.check_output([f"{out}/bitnet-convert", "inspect", "--json", path]))
        base = info["data_offset"]
        with open(path, "rb") as f:
            t = {}
            for ti in info["tensors"]:
                f.seek(base + ti["offset"])
                t[ti["name"]] = ti["type"] + " " + hashlib.sha256(f.read(ti["bytes"])).hexdigest()
        e["tensors"] = dict(sorted(t.items()))
    if kind == "refused":
        log = open(f"{out}/runs/{name}.log").read().splitlines()
        e["load_error"] = next(l for l in log if l.startswith("gguf_init_from_reader:"))
    files[name] = e
for line in open(f"{out}/runs.tsv"):
    name, prompt, mode, gen, sha = line.rstrip("\n").split("\t")
    runs.append({"file": name, "prompt": prompt, "mode": mode, "gen": [int(x) for x in gen.split()], "logits_sha256": sha})
runs.sort(key=lambda r: (r["file"], r["prompt"], r["mode"] != "seq"))
doc = {"files": dict(sorted(files.items())), "runs": runs}
open(f"{out}/mainline-home.json", "w").write(json.dumps(doc, indent=1) + "\n")
print(f"{out}/mainline-home.json: {len(files)} files, {len(runs)} runs")
EOF
