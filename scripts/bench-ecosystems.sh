#!/usr/bin/env bash
# Issue 11 acceptance e: the full-size BitNet-b1.58-2B-4T dummy converted by
# hf2gguf to each new outtype (tq1_0, tq2_0, iq1_bn, iq2_bn, i2_s --i2s-layout
# arm) under /usr/bin/time -v (wall, user+sys, peak RSS), then `requant` of its
# I2_S file to TQ2_0 next to a `cp` of the same file into the same directory,
# alternating, in the same run. Prints markdown tables for docs/performance.md.
#
# Usage: scripts/bench-ecosystems.sh
# Environment: BENCH_DIR (default a new dir under $TMPDIR; a tmpfs such as
# /dev/shm/bench takes the disk out of the figures; inputs there are reused),
# KEEP=1 keeps it, RUNS=N repetitions of the cp/requant pair (default 3).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "bench-ecosystems: /usr/bin/time is missing (apt-get install -y time)" >&2; exit 1; }
created=0
if [ -z "${BENCH_DIR:-}" ]; then
	BENCH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/bitnet-eco.XXXXXX")
	created=1
fi
mkdir -p "$BENCH_DIR"
cleanup() { if [ "$created" = 1 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$BENCH_DIR"; fi; }
trap cleanup EXIT
bin="$BENCH_DIR/bitnet-convert"
(cd "$root" && go build -o "$bin" ./cmd/bitnet-convert)
in="$BENCH_DIR/2b4t"
[ -f "$in/config.json" ] || "$bin" dummy --preset BitNet-b1.58-2B-4T --tokenizer "$root/testdata/tokenizers/llama3" --out "$in" --seed 1 >&2

field() { grep -F "$2" "$1" | sed 's/.*: //'; }
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }
measure() { # LABEL OUT CMD...: one timed run, prints a table row
	local label=$1 out=$2
	shift 2
	local log="$BENCH_DIR/time.log"
	/usr/bin/time -v "$@" >/dev/null 2>"$log"
	local wall cpu rss
	wall=$(seconds "$(field "$log" "Elapsed (wall clock)")")
	cpu=$(awk -v u="$(field "$log" "User time")" -v s="$(field "$log" "System time")" 'BEGIN { printf "%.2f", u + s }')
	rss=$(($(field "$log" "Maximum resident set size") / 1024))
	echo "| $label | ${wall} s | ${cpu} s | ${rss} MB | $(du -m "$out" | cut -f1) MB |"
}

echo "| hf2gguf outtype | wall | user+sys | peak RSS | output |"
echo "|---|---|---|---|---|"
for t in tq1_0 tq2_0 iq1_bn iq2_bn i2_s-arm; do
	out="$BENCH_DIR/out-$t.gguf"
	case $t in
	i2_s-arm) measure "$t" "$out" "$bin" hf2gguf "$in" --outtype i2_s --i2s-layout arm --outfile "$out" --force ;;
	*) measure "$t" "$out" "$bin" hf2gguf "$in" --outtype "$t" --outfile "$out" --force ;;
	esac
	rm -f "$out"
done

i2s="$BENCH_DIR/2b4t-i2_s.gguf"
[ -f "$i2s" ] || "$bin" hf2gguf "$in" --outfile "$i2s" >/dev/null
echo
echo "| run | cp of the I2_S file (same dir) | requant → TQ2_0 (same dir) | ratio | requant peak RSS |"
echo "|---|---|---|---|---|"
for r in $(seq "$runs"); do
	rm -f "$BENCH_DIR/copy.gguf" "$BENCH_DIR/tq2.gguf"
	/usr/bin/time -v cp "$i2s" "$BENCH_DIR/copy.gguf" 2>"$BENCH_DIR/cp.log"
	/usr/bin/time -v "$bin" requant "$i2s" --outtype tq2_0 --outfile "$BENCH_DIR/tq2.gguf" >/dev/null 2>"$BENCH_DIR/rq.log"
	c=$(seconds "$(field "$BENCH_DIR/cp.log" "Elapsed (wall clock)")")
	q=$(seconds "$(field "$BENCH_DIR/rq.log" "Elapsed (wall clock)")")
	rss=$(($(field "$BENCH_DIR/rq.log" "Maximum resident set size") / 1024))
	echo "| $r | ${c} s | ${q} s | $(awk -v a="$q" -v b="$c" 'BEGIN { printf "%.2f", a / b }') | ${rss} MB |"
done
rm -f "$BENCH_DIR/copy.gguf" "$BENCH_DIR/tq2.gguf"
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
