#!/usr/bin/env bash
# Full-size conversion benchmark (issue 4 item 4, BR-23): generates dummy
# checkpoints of real model sizes with `bitnet-convert dummy`, then measures
# `bitnet-convert hf2gguf` to I2_S with /usr/bin/time -v (wall time, user+sys
# CPU, peak RSS) next to the time of reading the input once with cat (warm
# page cache), in the same run. Prints a markdown table for docs/performance.md.
#
# Usage: scripts/bench-fullsize.sh [MODEL...]
#   MODEL: large (bitnet_b1_58-large, 1.46 GB bf16), 2b4t (BitNet-b1.58-2B-4T,
#          packed, Llama-3 tokenizer), llama8b-4l (BitNet-architecture dummy of
#          Llama3-8B-1.58 sizes, 4 layers, packed, 2 shards; BR-23).
#          Default: all three.
# Environment:
#   BENCH_DIR  where inputs and outputs go (default: a new dir under $TMPDIR;
#              use a tmpfs such as /dev/shm/bench to take the disk out of the
#              figures). Inputs already there are reused.
#   KEEP=1     keep BENCH_DIR afterwards (default: removed if created here).
#   RUNS=N     conversions per model; the fastest is reported (default 3).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(large 2b4t llama8b-4l)
runs=${RUNS:-3}

if [ ! -x /usr/bin/time ]; then
	echo "bench-fullsize: /usr/bin/time is missing (Debian/Ubuntu: apt-get install -y time)" >&2
	exit 1
fi

created=0
if [ -z "${BENCH_DIR:-}" ]; then
	BENCH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/bitnet-bench.XXXXXX")
	created=1
fi
mkdir -p "$BENCH_DIR"
cleanup() { if [ "$created" = 1 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$BENCH_DIR"; fi; }
trap cleanup EXIT

bin="$BENCH_DIR/bitnet-convert"
(cd "$root" && go build -o "$bin" ./cmd/bitnet-convert)

# gen NAME ARGS...: generate a dummy into $BENCH_DIR/NAME unless present.
gen() {
	local name=$1
	shift
	if [ -f "$BENCH_DIR/$name/config.json" ]; then
		return
	fi
	"$bin" dummy "$@" --out "$BENCH_DIR/$name" --seed 1 >&2
}

# field FILE LABEL: a value from /usr/bin/time -v output.
field() { grep -F "$2" "$1" | sed 's/.*: //'; }

# seconds "m:ss.ss" or "h:mm:ss" → seconds
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }

echo "| model | input | read once (cat, warm) | hf2gguf wall | user+sys CPU | MB/s (wall) | peak RSS | output |"
echo "|---|---|---|---|---|---|---|---|"
for m in "${models[@]}"; do
	flags=()
	case $m in
	large)
		gen "$m" --preset bitnet_b1_58-large
		flags=(--no-vocab)
		;;
	2b4t)
		gen "$m" --preset BitNet-b1.58-2B-4T --tokenizer "$root/testdata/tokenizers/llama3"
		;;
	llama8b-4l)
		cfg="$BENCH_DIR/llama8b-4l.config.json"
		cat >"$cfg" <<'JSON'
{"architectures": ["BitnetForCausalLM"], "model_type": "llama", "hidden_act": "silu",
 "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
 "num_hidden_layers": 4, "vocab_size": 128256, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
 "max_position_embeddings": 8192, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
 "quantization_config": {"quant_method": "bitnet"}}
JSON
		gen "$m" --config "$cfg" --packed --linear-class bitlinear --max-shard-size 1300MB
		flags=(--no-vocab)
		;;
	*)
		echo "bench-fullsize: unknown model $m (large, 2b4t, llama8b-4l)" >&2
		exit 2
		;;
	esac
	dir="$BENCH_DIR/$m"
	in_bytes=$(cat "$dir"/*.safetensors | wc -c)
	cat "$dir"/*.safetensors >/dev/null # warm the page cache
	/usr/bin/time -v -o "$BENCH_DIR/cat.time" sh -c "cat $dir/*.safetensors >/dev/null"
	cat_s=$(seconds "$(field "$BENCH_DIR/cat.time" 'Elapsed (wall clock)')")
	best=""
	for r in $(seq "$runs"); do
		/usr/bin/time -v -o "$BENCH_DIR/conv.time" "$bin" hf2gguf "$dir" --outfile "$BENCH_DIR/$m.gguf" --force "${flags[@]}" >"$BENCH_DIR/$m.log" 2>&1
		wall=$(seconds "$(field "$BENCH_DIR/conv.time" 'Elapsed (wall clock)')")
		cpu=$(awk -v u="$(field "$BENCH_DIR/conv.time" 'User time')" -v s="$(field "$BENCH_DIR/conv.time" 'System time')" 'BEGIN { printf "%.2f", u + s }')
		rss=$(field "$BENCH_DIR/conv.time" 'Maximum resident set size')
		if [ -z "$best" ] || awk -v a="$wall" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
			best="$wall $cpu $rss"
		fi
	done
	read -r wall cpu rss <<<"$best"
	out_bytes=$(wc -c <"$BENCH_DIR/$m.gguf")
	awk -v m="$m" -v ib="$in_bytes" -v c="$cat_s" -v w="$wall" -v cpu="$cpu" -v rss="$rss" -v ob="$out_bytes" 'BEGIN {
		printf "| %s | %.2f GB | %.2f s | %.2f s (%.1f× cat) | %.2f s | %.0f | %.0f MB | %.2f GB |\n",
			m, ib / 1e9, c, w, (c > 0 ? w / c : 0), cpu, (w > 0 ? ib / 1e6 / w : 0), rss / 1024, ob / 1e9 }'
done
echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1e6 }' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg), BENCH_DIR on $(df --output=fstype "$BENCH_DIR" | tail -1)"
if [ -f "$BENCH_DIR/2b4t.gguf" ]; then
	echo
	echo "2B-4T check (acceptance c): $("$bin" inspect "$BENCH_DIR/2b4t.gguf" | grep -c ' I2_S(36) ') I2_S tensors;" \
		"$("$bin" inspect "$BENCH_DIR/2b4t.gguf" | grep -E '^ +token_embd\.weight' | awk '{ print $1, $2, $3, $4 }');" \
		"$("$bin" inspect "$BENCH_DIR/2b4t.gguf" | grep -E 'tokenizer\.ggml\.(model|pre|tokens) ' | awk '{ printf "%s %s %s; ", $1, $2, $3 }')"
fi
