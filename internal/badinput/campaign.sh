#!/usr/bin/env bash
# campaign.sh — hostile-input campaign over every bitnet-convert command
# (issue 10 acceptance c). Each case is one distinct bad input (a mutated
# config, safetensors header, GGUF header/KV/tensor info, flag value, path or
# tokenizer file) run once under `timeout 60`. Each run is checked for:
#   - no panic, "goroutine ", or Go stack trace ("*.go:N") in stdout/stderr;
#   - exit code 1 or 2 for a failure (0 only where success is right; 124 = hang);
#   - on failure, the last stderr line is the error and stderr is one line
#     (extra notice lines are counted separately as "multiline");
#   - no `.*.partial-*` temp file left anywhere under the work directory;
#   - inputs unchanged (sha256 of every input before and after the campaign).
#
# Usage (from anywhere; about 11 minutes on two idle cores):
#   internal/badinput/campaign.sh [workdir]
# builds the binary from this tree into the work directory first; BC=PATH
# tests another binary instead, ONLY=REGEX runs only the cases whose name
# (the text in [brackets] of a finding) matches. Needs go, bash, python3,
# sha256sum, mkfifo, timeout. Every case states what is right for it: "fail"
# (exit 1 or 2), "ok" (exit 0: a legal value, e.g. 0 or '' meaning the
# default) or "any" (a mutation the tool may accept or refuse). Prints one
# line per finding and a summary; exits 1 if any finding (panic, trace, an
# exit code other than the expected one, hang, partial file, changed input)
# was seen, 0 otherwise. The work directory (default a new /tmp/bc-campaign.*)
# keeps every case's stdout/stderr under log/N.out, log/N.err.
set -u
ONLY=${ONLY:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TINY=$ROOT/testdata/golden/tiny-bitnet/hf
GG=$ROOT/testdata/golden/tiny-bitnet/gguf
W=${1:-$(mktemp -d /tmp/bc-campaign.XXXXXX)}
W=$(mkdir -p "$W" && cd "$W" && pwd)
mkdir -p "$W/in" "$W/out/emptydir" "$W/log"
if [ -z "${BC:-}" ]; then
	BC=$W/bitnet-convert
	(cd "$ROOT" && go build -o "$BC" ./cmd/bitnet-convert) || { echo "campaign: go build failed" >&2; exit 1; }
fi
IN=$W/in
N=0 RUNS=0 HARD=0 MULTI=0 OK0=0

# run EXPECT NAME ARGS... — EXPECT is fail (1|2 required), ok (0 required) or
# any (0, 1 or 2 acceptable: a mutation the tool may legitimately accept).
run() {
	local expect=$1 name=$2; shift 2
	N=$((N + 1))
	if [ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]]; then return; fi
	RUNS=$((RUNS + 1))
	local o=$W/log/$N.out e=$W/log/$N.err
	local before; before=$(inhash "$@")
	(cd "$W/out" && timeout 60 "$BC" "$@" </dev/null >"$o" 2>"$e")
	local rc=$?
	local bad=""
	if grep -qE 'panic|goroutine |\.go:[0-9]+' "$o" "$e"; then bad+=" trace"; fi
	case $rc in
	124) bad+=" hang" ;;
	0) [ "$expect" = fail ] && bad+=" exit0"; [ "$expect" = ok ] || OK0=$((OK0 + 1)) ;;
	1 | 2) [ "$expect" = ok ] && bad+=" exit$rc" ;;
	*) bad+=" exit$rc" ;;
	esac
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then
		local lines; lines=$(grep -c . "$e")
		if [ "$lines" -eq 0 ]; then bad+=" noerr"; elif [ "$lines" -gt 1 ]; then MULTI=$((MULTI + 1)); fi
	fi
	if [ -n "$(find "$W" -name '.*.partial-*' 2>/dev/null | head -1)" ]; then
		bad+=" partial"; find "$W" -name '.*.partial-*' -delete
	fi
	rm -rf "$W/out"/* "$W/out"/.[!.]* 2>/dev/null
	mkdir -p "$W/out/emptydir"
	[ "$before" = "$(inhash "$@")" ] || bad+=" input-changed"
	if [ -n "$bad" ]; then
		HARD=$((HARD + 1))
		echo "FINDING #$N [$name]:$bad rc=$rc :: $* :: $(tail -c 300 "$e" | tr '\n' '|')"
	fi
}

# inhash ARGS... — sha256 of every regular file named by an argument under
# $IN (or directly inside such a directory); FIFOs are not opened.
inhash() {
	local a
	for a in "$@"; do
		case $a in "$IN"/*) ;; *) continue ;; esac
		if [ -d "$a" ] && [ ! -L "$a" ]; then find "$a" -maxdepth 1 -type f -exec sha256sum {} +
		elif [ -f "$a" ]; then sha256sum "$a"; fi
	done 2>/dev/null
}

py() { python3 - "$@"; }

# ---------------------------------------------------------------- fixtures
cp -r "$TINY" "$IN/tiny"
cp "$GG/ggml-model-i2_s.gguf" "$IN/i2s.gguf"
cp "$GG/ggml-model-tl1.gguf" "$IN/tl1.gguf"
cp "$GG/ggml-model-f32.gguf" "$IN/f32.gguf"
cp "$GG/kernel_config_tl1.ini" "$IN/k1.ini"
printf 'The quick brown fox jumps over the lazy dog. %.0s' $(seq 40) >"$IN/text.txt"
: >"$IN/empty"
mkdir -p "$IN/emptydir"
mkfifo "$IN/fifo"
ln -s "$IN/nonexistent" "$IN/dangling"
ln -s "$IN/loop" "$IN/loop"
ln -s "$IN/i2s.gguf" "$IN/link.gguf"
head -c 4096 /dev/urandom >"$IN/random.bin"
printf 'GGUF' >"$IN/magic-only.gguf"

# mkmodel NAME — copy of tiny under $IN/NAME, echo the path
mkmodel() { rm -rf "$IN/$1"; cp -r "$IN/tiny" "$IN/$1"; echo "$IN/$1"; }

# ------------------------------------------------ 1. config.json mutations
KEYS="architectures model_type hidden_size intermediate_size num_hidden_layers num_attention_heads num_key_value_heads vocab_size max_position_embeddings rms_norm_eps rope_theta rope_scaling tie_word_embeddings bos_token_id eos_token_id torch_dtype"
i=0
for k in $KEYS; do
	for v in DELETE -1 0 '"x"' null 1e30 '[]' 3.5; do
		i=$((i + 1)); m=$(mkmodel cfg$i)
		py "$m/config.json" "$k" "$v" <<'EOF'
import json, sys
p, k, v = sys.argv[1:]
c = json.load(open(p))
if v == "DELETE": c.pop(k, None)
else: c[k] = json.loads(v)
json.dump(c, open(p, "w"))
EOF
		run any "config $k=$v" hf2gguf "$m" --outfile "$W/out/x.gguf"
	done
done
# whole-file config corruptions
for body in '' '{' 'null' '[]' '"str"' '{"architectures":["Nope"]}' '{"architectures":[]}' '{"architectures":[1]}' "$(printf '\xff\xfe')" '{"hidden_size":256,"hidden_size":-1}'; do
	i=$((i + 1)); m=$(mkmodel cfg$i); printf '%s' "$body" >"$m/config.json"
	run fail "config body '$body'" hf2gguf "$m" --outfile "$W/out/x.gguf"
done
m=$(mkmodel cfgdir); rm "$m/config.json"; mkdir "$m/config.json"
run fail "config.json is a dir" hf2gguf "$m" --outfile "$W/out/x.gguf"
m=$(mkmodel cfgmissing); rm "$m/config.json"
run fail "config.json missing" hf2gguf "$m" --outfile "$W/out/x.gguf"
m=$(mkmodel cfgfifo); rm "$m/config.json"; mkfifo "$m/config.json"
run fail "config.json fifo" hf2gguf "$m" --outfile "$W/out/x.gguf"

# ------------------------------------------- 2. safetensors header mutations
# stmut NAME MODE ARG — mutate model.safetensors
stmut() {
	local m; m=$(mkmodel "$1")
	py "$m/model.safetensors" "$2" "${3:-}" <<'EOF'
import json, struct, sys
p, mode, arg = sys.argv[1:]
b = open(p, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8+n]); data = b[8+n:]
names = sorted(k for k in h if k != "__metadata__")
def put(hh, d=data):
    s = json.dumps(hh).encode(); s += b" " * ((8 - len(s) % 8) % 8)
    open(p, "wb").write(struct.pack("<Q", len(s)) + s + d)
if mode == "hlen":
    open(p, "wb").write(struct.pack("<Q", int(arg)) + b[8:])
elif mode == "cut":
    open(p, "wb").write(b[:int(arg)])
elif mode == "hjson":
    s = arg.encode("utf-8", "surrogateescape"); open(p, "wb").write(struct.pack("<Q", len(s)) + s + data)
elif mode == "dtype":
    t = names[int(arg.split(":")[0])]; h[t]["dtype"] = arg.split(":")[1]; put(h)
elif mode == "shape":
    t = names[int(arg.split(":")[0])]; h[t]["shape"] = json.loads(arg.split(":", 1)[1]); put(h)
elif mode == "offs":
    t = names[int(arg.split(":")[0])]; h[t]["data_offsets"] = json.loads(arg.split(":", 1)[1]); put(h)
elif mode == "drop":
    h.pop(names[int(arg)]); put(h)
elif mode == "rename":
    t = names[int(arg)]; h[t + ".x"] = h.pop(t); put(h)
elif mode == "dup":
    t = names[int(arg)]; h["model.layers.9.self_attn.q_proj.weight"] = h[t]; put(h)
elif mode == "meta":
    h["__metadata__"] = json.loads(arg); put(h)
elif mode == "trail":
    open(p, "wb").write(b + b"\x00" * int(arg))
EOF
	echo "$m"
}
NT=$(py "$IN/tiny/model.safetensors" <<'EOF'
import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]
print(len([k for k in json.loads(b[8:8+n]) if k != "__metadata__"]))
EOF
)
SZ=$(stat -c %s "$IN/tiny/model.safetensors")
j=0
for v in 0 1 7 9 1000000000 18446744073709551615 9223372036854775807 $SZ $((SZ - 8)); do
	j=$((j + 1)); m=$(stmut st$j hlen "$v"); run fail "st hlen=$v" hf2gguf "$m" --outfile "$W/out/x.gguf"
done
for v in 0 4 8 9 20 100 1000 $((SZ / 2)) $((SZ - 1)); do
	j=$((j + 1)); m=$(stmut st$j cut "$v"); run fail "st cut=$v" hf2gguf "$m" --outfile "$W/out/x.gguf"
done
for v in '' '{' '[]' 'null' '{"a":1}' '{"a":{"dtype":"F32"}}' "$(printf '{"\xff":1}')" '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}} trailing'; do
	j=$((j + 1)); m=$(stmut st$j hjson "$v"); run fail "st header '$v'" hf2gguf "$m" --outfile "$W/out/x.gguf"
done
for t in 0 3 $((NT / 2)) $((NT - 1)); do
	for d in F64 I8 U8 BOOL F8_E4M3 NOPE '' F16 I64; do
		j=$((j + 1)); m=$(stmut st$j dtype "$t:$d"); run any "st dtype t$t=$d" hf2gguf "$m" --outfile "$W/out/x.gguf"
	done
	for s in '[]' '[0]' '[-1,256]' '[1,2,3,4,5]' '[4294967296,4294967296]' '[257]' '"x"'; do
		j=$((j + 1)); m=$(stmut st$j shape "$t:$s"); run fail "st shape t$t=$s" hf2gguf "$m" --outfile "$W/out/x.gguf"
	done
	for o in '[0,0]' '[5,3]' '[-1,4]' '[0,99999999999]' '[1,3]' '"x"'; do
		j=$((j + 1)); m=$(stmut st$j offs "$t:$o"); run fail "st offs t$t=$o" hf2gguf "$m" --outfile "$W/out/x.gguf"
	done
	j=$((j + 1)); m=$(stmut st$j drop "$t"); run fail "st drop t$t" hf2gguf "$m" --outfile "$W/out/x.gguf"
	j=$((j + 1)); m=$(stmut st$j rename "$t"); run fail "st rename t$t" hf2gguf "$m" --outfile "$W/out/x.gguf"
done
j=$((j + 1)); m=$(stmut st$j dup 0); run fail "st extra layer tensor" hf2gguf "$m" --outfile "$W/out/x.gguf"
for v in '{"format":"tf"}' '[]' '{"format":1}' 'null'; do
	j=$((j + 1)); m=$(stmut st$j meta "$v"); run any "st metadata $v" hf2gguf "$m" --outfile "$W/out/x.gguf"
done
j=$((j + 1)); m=$(stmut st$j trail 13); run any "st trailing bytes" hf2gguf "$m" --outfile "$W/out/x.gguf"
m=$(mkmodel stdir); rm "$m/model.safetensors"; mkdir "$m/model.safetensors"
run fail "safetensors is dir" hf2gguf "$m" --outfile "$W/out/x.gguf"
m=$(mkmodel stfifo); rm "$m/model.safetensors"; mkfifo "$m/model.safetensors"
run fail "safetensors fifo" hf2gguf "$m" --outfile "$W/out/x.gguf"
m=$(mkmodel stnull); rm "$m/model.safetensors"; ln -s /dev/null "$m/model.safetensors"
run fail "safetensors -> /dev/null" hf2gguf "$m" --outfile "$W/out/x.gguf"
m=$(mkmodel stdangling); rm "$m/model.safetensors"; ln -s "$m/nope" "$m/model.safetensors"
run fail "safetensors dangling" hf2gguf "$m" --outfile "$W/out/x.gguf"
for body in '' '{' '{"weight_map":{}}' '{"weight_map":{"model.embed_tokens.weight":"nope.safetensors"}}' '{"weight_map":{"model.embed_tokens.weight":"../../etc/passwd"}}' '{"weight_map":[]}'; do
	j=$((j + 1)); m=$(mkmodel st$j); printf '%s' "$body" >"$m/model.safetensors.index.json"
	run any "st index '$body'" hf2gguf "$m" --outfile "$W/out/x.gguf"
done

# ---------------------------------------------------- 3. tokenizer files
for body in EMPTY GARBAGE CUT; do
	j=$((j + 1)); m=$(mkmodel tk$j)
	case $body in
	EMPTY) : >"$m/tokenizer.model" ;;
	GARBAGE) head -c 2000 /dev/urandom >"$m/tokenizer.model" ;;
	CUT) head -c 3000 "$IN/tiny/tokenizer.model" >"$m/tokenizer.model.x"; mv "$m/tokenizer.model.x" "$m/tokenizer.model" ;;
	esac
	run fail "tokenizer.model $body" hf2gguf "$m" --outfile "$W/out/x.gguf"
done
for body in '' '{' 'null' '{"add_bos_token":"yes"}' '{"bos_token":123}' '{"chat_template":42}' '{"added_tokens_decoder":{"x":{}}}' '{"added_tokens_decoder":{"999999":{"content":"<x>","special":true}}}'; do
	j=$((j + 1)); m=$(mkmodel tk$j); printf '%s' "$body" >"$m/tokenizer_config.json"
	run any "tokenizer_config '$body'" hf2gguf "$m" --outfile "$W/out/x.gguf"
done
for body in '' '{' '{"model":{"type":"BPE","vocab":{},"merges":[]}}' '{"model":{"type":"WordPiece"}}' '{"model":{"type":"BPE","vocab":{"a":0,"b":0},"merges":["a b"]}}' '{"model":{"type":"BPE","vocab":{"a":-5},"merges":[]}}'; do
	j=$((j + 1)); m=$(mkmodel tk$j); printf '%s' "$body" >"$m/tokenizer.json"
	run any "tokenizer.json '$body'" hf2gguf "$m" --outfile "$W/out/x.gguf"
done
for tk in EMPTY GARBAGE MISSING DIR; do
	j=$((j + 1)); d=$IN/tkdir$j; mkdir -p "$d"
	case $tk in
	EMPTY) : >"$d/tokenizer.json" ;; GARBAGE) head -c 999 /dev/urandom >"$d/tokenizer.json" ;; DIR) mkdir "$d/tokenizer.json" ;; MISSING) ;;
	esac
	run fail "dummy --tokenizer $tk" dummy --config "$IN/tiny/config.json" --tokenizer "$d" --out "$W/out/d"
done

# ------------------------------------------------- 4. GGUF mutations
# ggmut NAME MODE ARG — mutate a copy of the tiny I2_S GGUF
ggmut() {
	local p=$IN/$1.gguf
	py "$IN/i2s.gguf" "$p" "$2" "${3:-}" <<'EOF'
import struct, sys, random
src, dst, mode, arg = sys.argv[1:]
b = bytearray(open(src, "rb").read())
if mode == "cut":
    b = b[:int(arg)]
elif mode == "u32":           # overwrite a u32 at offset off:value
    off, v = arg.split(":"); struct.pack_into("<I", b, int(off), int(v) & 0xffffffff)
elif mode == "u64":
    off, v = arg.split(":"); struct.pack_into("<Q", b, int(off), int(v) & 0xffffffffffffffff)
elif mode == "flip":          # seeded random byte flips in the header (first 64 KiB)
    r = random.Random(int(arg)); lim = min(len(b), 65536)
    for _ in range(r.randint(1, 4)):
        b[r.randrange(8, lim)] ^= 1 << r.randrange(8)
elif mode == "kv":            # set the value of a u32/f32 KV named key (first occurrence)
    key, v = arg.split("=")
    k = key.encode(); i = b.find(struct.pack("<Q", len(k)) + k)
    assert i > 0, key
    j = i + 8 + len(k); t = struct.unpack_from("<I", b, j)[0]
    if t == 4: struct.pack_into("<I", b, j + 4, int(float(v)) & 0xffffffff)
    elif t == 5: struct.pack_into("<i", b, j + 4, int(float(v)))
    elif t == 6: struct.pack_into("<f", b, j + 4, float(v))
    elif t == 10: struct.pack_into("<Q", b, j + 4, int(float(v)) & 0xffffffffffffffff)
    elif t == 7: b[j + 4] = int(float(v)) & 0xff
    else: raise SystemExit("kv type %d" % t)
elif mode == "kvtype":        # change the type tag of key
    key, v = arg.split("=")
    k = key.encode(); i = b.find(struct.pack("<Q", len(k)) + k)
    assert i > 0, key
    struct.pack_into("<I", b, i + 8 + len(k), int(v))
elif mode == "tname":         # corrupt a tensor name's dims/type: name:field:value
    name, field, v = arg.split(":")
    k = name.encode(); i = b.rfind(struct.pack("<Q", len(k)) + k)
    assert i > 0, name
    j = i + 8 + len(k); nd = struct.unpack_from("<I", b, j)[0]
    if field == "ndim": struct.pack_into("<I", b, j, int(v))
    elif field == "ne0": struct.pack_into("<Q", b, j + 4, int(v) & 0xffffffffffffffff)
    elif field == "type": struct.pack_into("<I", b, j + 4 + 8 * nd, int(v))
    elif field == "off": struct.pack_into("<Q", b, j + 8 + 8 * nd, int(v) & 0xffffffffffffffff)
open(dst, "wb").write(b)
EOF
	echo "$p"
}
GSZ=$(stat -c %s "$IN/i2s.gguf")
ggcmds() { # ggcmds EXPECT NAME FILE — the GGUF readers
	run "$1" "$2/inspect" inspect "$3"
	run "$1" "$2/run" run -m "$3" --ids 1,2 -n 1
	run "$1" "$2/verify" verify --gguf "$3" --ids 1,2
	run "$1" "$2/tokenize" tokenize -m "$3" -p hello
}
g=0
for c in 0 3 4 8 12 20 24 100 1000 5000 $((GSZ / 2)) $((GSZ - 1)); do
	g=$((g + 1)); p=$(ggmut g$g cut "$c"); ggcmds fail "gguf cut=$c" "$p"
done
# header fields: version (off 4), tensor count (8), kv count (16)
for f in 4:0 4:1 4:4 4:99 8:0 8:100000 8:18446744073709551615 16:0 16:1000000000 16:18446744073709551615; do
	g=$((g + 1)); off=${f%%:*}; if [ "$off" = 4 ]; then p=$(ggmut g$g u32 "$f"); else p=$(ggmut g$g u64 "$f"); fi
	e=fail; [ "$f" = 8:0 ] && e=any # zero tensors: a metadata-only file inspect may list
	run "$e" "gguf hdr $f/inspect" inspect "$p"
	run fail "gguf hdr $f/run" run -m "$p" --ids 1 -n 1
done
for s in $(seq 1 40); do
	g=$((g + 1)); p=$(ggmut g$g flip "$s")
	run any "gguf flip seed $s/inspect" inspect "$p"
	run any "gguf flip seed $s/run" run -m "$p" --ids 1,2 -n 1
done
for kv in bitnet.block_count=0 bitnet.block_count=1 bitnet.block_count=3 bitnet.block_count=1073741824 bitnet.block_count=4294967295 \
	bitnet.embedding_length=0 bitnet.embedding_length=255 bitnet.embedding_length=4294967295 \
	bitnet.feed_forward_length=0 bitnet.feed_forward_length=4294967295 \
	bitnet.attention.head_count=0 bitnet.attention.head_count=3 bitnet.attention.head_count=4294967295 \
	bitnet.attention.head_count_kv=0 bitnet.attention.head_count_kv=3 bitnet.attention.head_count_kv=8 \
	bitnet.context_length=0 bitnet.context_length=1 bitnet.context_length=4294967295 \
	bitnet.rope.freq_base=0 bitnet.rope.freq_base=-1 bitnet.rope.freq_base=inf bitnet.rope.freq_base=nan \
	bitnet.attention.layer_norm_rms_epsilon=0 bitnet.attention.layer_norm_rms_epsilon=-1 bitnet.attention.layer_norm_rms_epsilon=nan \
	tokenizer.ggml.bos_token_id=999999 tokenizer.ggml.eos_token_id=4294967295 tokenizer.ggml.add_bos_token=7 \
	general.file_type=99999; do
	g=$((g + 1)); p=$(ggmut g$g kv "$kv") || { echo "skip kv $kv"; continue; }
	run any "gguf kv $kv/run" run -m "$p" --ids 1,2 -n 1
	run any "gguf kv $kv/verify" verify --gguf "$p" --ids 1,2
	run any "gguf kv $kv/perplexity" perplexity -m "$p" -f "$IN/text.txt" -c 16 --chunks 1
done
for kt in general.architecture=4 general.architecture=99 bitnet.block_count=8 bitnet.block_count=9 bitnet.block_count=6 tokenizer.ggml.tokens=8 tokenizer.ggml.model=9 tokenizer.ggml.scores=4; do
	g=$((g + 1)); p=$(ggmut g$g kvtype "$kt") || { echo "skip kvtype $kt"; continue; }
	# A u32 retyped to f32 (type 6) is still a well-formed file: inspect lists it.
	e=fail; [ "$kt" = bitnet.block_count=6 ] && e=ok
	run "$e" "gguf kvtype $kt/inspect" inspect "$p"
	run fail "gguf kvtype $kt/run" run -m "$p" --ids 1 -n 1
done
for tn in token_embd.weight:ndim:0 token_embd.weight:ndim:5 token_embd.weight:ndim:4294967295 token_embd.weight:ne0:0 token_embd.weight:ne0:18446744073709551615 token_embd.weight:ne0:255 \
	token_embd.weight:type:99 token_embd.weight:type:36 token_embd.weight:off:1 token_embd.weight:off:18446744073709551584 \
	blk.0.attn_q.weight:type:0 blk.0.attn_q.weight:type:1 blk.0.attn_q.weight:off:99999999 blk.0.attn_q.weight:ne0:512 blk.1.ffn_down.weight:ne0:0 output_norm.weight:type:36; do
	g=$((g + 1)); p=$(ggmut g$g tname "$tn") || { echo "skip tname $tn"; continue; }
	run any "gguf tinfo $tn/inspect" inspect "$p"
	# token_embd retyped to I2_S fits its byte range: a valid I2_S embedding.
	e=fail; [ "$tn" = token_embd.weight:type:36 ] && e=ok
	run "$e" "gguf tinfo $tn/run" run -m "$p" --ids 1,2 -n 1
	run fail "gguf tinfo $tn/requant" requant "$p" --outtype tq2_0 --outfile "$W/out/r.gguf"
done

# -------------------------------------------------- 5. paths, every command
for pth in "$IN/nonexistent" "$IN/emptydir" "$IN/fifo" /dev/null "$IN/dangling" "$IN/loop" "$IN/empty" "$IN/random.bin" "$IN/magic-only.gguf"; do
	b=$(basename "$pth")
	run fail "path $b/inspect" inspect "$pth"
	run fail "path $b/run" run -m "$pth" --ids 1 -n 1
	run fail "path $b/verify" verify --gguf "$pth"
	run fail "path $b/perplexity" perplexity -m "$pth" -f "$IN/text.txt"
	run fail "path $b/tokenize" tokenize -m "$pth" -p hi
	run fail "path $b/embed" embed -m "$pth" -p hi
	run fail "path $b/requant" requant "$pth" --outtype tq2_0 --outfile "$W/out/r.gguf"
	run fail "path $b/hf2gguf" hf2gguf "$pth" --outfile "$W/out/x.gguf"
	run fail "path $b/verify--hf" verify --gguf "$IN/i2s.gguf" --hf "$pth"
	# Any readable bytes are a text: tokenize takes empty ones too, perplexity
	# needs one chunk (-c 16) of tokens.
	e=fail; [ "$b" = random.bin ] && e=ok
	run "$e" "path $b/perplexity -f" perplexity -m "$IN/i2s.gguf" -f "$pth" -c 16
	e=fail; case $b in null | empty | random.bin | magic-only.gguf) e=ok ;; esac
	run "$e" "path $b/tokenize -f" tokenize -m "$IN/i2s.gguf" -f "$pth"
	run fail "path $b/codegen --from-config" codegen --from-config "$pth" --arch tl1 --outdir "$W/out/cg"
	run fail "path $b/dummy --config" dummy --config "$pth" --out "$W/out/d"
	run fail "path $b/kernel-config" run -m "$IN/tl1.gguf" --ids 1 -n 1 --kernel-config "$pth"
done
run ok "symlinked gguf" inspect "$IN/link.gguf"
# outputs into bad places. Expected: an existing directory is where hf2gguf
# puts its default name and where dummy/codegen write; dummy and codegen
# create a missing output directory; an empty --outfile means the default
# name (hf2gguf, requant) or no dump (run). ($W/out/emptydir is re-made
# empty before every run, see run.)
for o in /dev/null "$W/out/emptydir" "$IN/fifo" "$W/out/nodir/x.gguf" "$W/out/new/" /proc/x.gguf "$IN/i2s.gguf" ""; do
	isdir=; newdir=; empty=
	case $o in "$W/out/emptydir") isdir=1 ;; "$W/out/nodir/x.gguf" | "$W/out/new/") newdir=1 ;; "") empty=1 ;; esac
	run "$( [ -n "$isdir$empty" ] && echo ok || echo fail)" "outfile '$o'/hf2gguf" hf2gguf "$IN/tiny" --outfile "$o"
	run "$( [ -n "$empty" ] && echo ok || echo fail)" "outfile '$o'/requant" requant "$IN/i2s.gguf" --outtype tq2_0 --outfile "$o"
	run "$( [ -n "$isdir$newdir" ] && echo ok || echo fail)" "outfile '$o'/dummy" dummy --preset bitnet_b1_58-large --layers 1 --out "$o"
	run "$( [ -n "$isdir$newdir" ] && echo ok || echo fail)" "outfile '$o'/codegen" codegen --model bitnet_b1_58-large --arch tl1 --outdir "$o"
	run "$( [ -n "$empty" ] && echo ok || echo fail)" "outfile '$o'/dump-logits" run -m "$IN/i2s.gguf" --ids 1 -n 1 --dump-logits "$o"
done

# -------------------------------------------------------- 6. flag values
G=$IN/i2s.gguf
# 0 means "the default" for -n (the file's context), --threads (all cores),
# --chunks (all) and --tokens (the default count), as in llama.cpp's tools;
# -c and --layers must be positive.
for v in -1 0 -9223372036854775808 99999999999999999999 abc 1.5 ''; do
	z=fail; [ "$v" = 0 ] && z=ok
	run "$z" "run -n $v" run -m "$G" --ids 1 -n "$v"
	run "$z" "run --threads $v" run -m "$G" --ids 1 -n 1 --threads "$v"
	run fail "perplexity -c $v" perplexity -m "$G" -f "$IN/text.txt" -c "$v" --chunks 1
	run "$z" "perplexity --chunks $v" perplexity -m "$G" -f "$IN/text.txt" -c 16 --chunks "$v"
	run fail "dummy --layers $v" dummy --preset bitnet_b1_58-large --layers "$v" --out "$W/out/d"
	run "$z" "hf2gguf --threads $v" hf2gguf "$IN/tiny" --threads "$v" --outfile "$W/out/x.gguf"
	run "$z" "verify --tokens $v" verify --gguf "$G" --ids 1 --tokens "$v"
done
# Legal: --temp 2; --min-top1 / --max-kl -1 (the "off" sentinels), --max-kl 2
# and inf (no bound).
for v in nan inf -inf -1 2 abc; do
	run "$( [ "$v" = 2 ] && echo ok || echo fail)" "run --temp $v" run -m "$G" --ids 1 -n 1 --temp "$v"
	run "$( [ "$v" = -1 ] && echo ok || echo fail)" "verify --min-top1 $v" verify --gguf "$G" --hf "$IN/tiny" --min-top1 "$v"
	e=fail; case $v in -1 | 2 | inf) e=ok ;; esac
	run "$e" "verify --max-kl $v" verify --gguf "$G" --hf "$IN/tiny" --max-kl "$v"
done
# Legal: ' 1' (spaces are trimmed); verify --ids '' means its default prompt.
# embed fails on every value: the tiny model is not an embedding model.
for v in '' , 1,,2 -1 512 99999999999 a 1.5 ' 1' '1;2' 4294967296; do
	run "$( [ "$v" = ' 1' ] && echo ok || echo fail)" "run --ids '$v'" run -m "$G" --ids "$v" -n 1
	e=fail; case $v in '' | ' 1') e=ok ;; esac
	run "$e" "verify --ids '$v'" verify --gguf "$G" --ids "$v"
	run fail "embed --ids '$v'" embed -m "$G" --ids "$v"
done
# Legal: type names in any case (I2_S), q8_0 for the embedding, and '' where
# an empty flag means its default (--token-embedding-type, --weight-scale,
# --pre, codegen --arch).
for v in nope I2_S q8_0 '' tl3 i2_s,tl1; do
	run "$( [ "$v" = I2_S ] && echo ok || echo fail)" "hf2gguf --outtype '$v'" hf2gguf "$IN/tiny" --outtype "$v" --outfile "$W/out/x.gguf"
	run "$( [ "$v" = I2_S ] && echo ok || echo fail)" "requant --outtype '$v'" requant "$G" --outtype "$v" --outfile "$W/out/r.gguf"
	e=fail; case $v in q8_0 | '') e=ok ;; esac
	run "$e" "hf2gguf --token-embedding-type '$v'" hf2gguf "$IN/tiny" --token-embedding-type "$v" --outfile "$W/out/x.gguf"
	run fail "hf2gguf --i2s-layout '$v'" hf2gguf "$IN/tiny" --i2s-layout "$v" --outfile "$W/out/x.gguf"
	e=fail; [ -z "$v" ] && e=ok
	run "$e" "hf2gguf --weight-scale '$v'" hf2gguf "$IN/tiny" --weight-scale "$v" --outfile "$W/out/x.gguf"
	run "$e" "codegen --arch '$v'" codegen --model bitnet_b1_58-large --arch "$v" --outdir "$W/out/cg"
	run fail "codegen --model '$v'" codegen --model "$v" --arch tl1 --outdir "$W/out/cg"
	run fail "dummy --preset '$v'" dummy --preset "$v" --layers 1 --out "$W/out/d"
	run fail "embed --pooling '$v'" embed -m "$G" --ids 1 --pooling "$v"
	run "$e" "hf2gguf --pre '$v'" hf2gguf "$IN/tiny" --pre "$v" --outfile "$W/out/x.gguf"
done
for v in '' 0 -1 32 1,2 abc 4096,4096 '64;64'; do # '' is the preset's tiling
	run "$( [ -z "$v" ] && echo ok || echo fail)" "codegen --BM '$v'" codegen --model bitnet_b1_58-large --arch tl1 --BM "$v" --outdir "$W/out/cg"
done
for v in '' 0 -1 1x 1KB 99999999999999GB; do # 1KB: one tensor per shard
	run "$( [ "$v" = 1KB ] && echo ok || echo fail)" "dummy --max-shard-size '$v'" dummy --preset bitnet_b1_58-large --layers 1 --max-shard-size "$v" --out "$W/out/d"
done
for v in "$IN/text.txt" "$IN/empty" "$IN/random.bin" "$IN/nonexistent"; do # an empty TOML file sets nothing
	run "$( [ "$v" = "$IN/empty" ] && echo ok || echo fail)" "hf2gguf --metadata $(basename "$v")" hf2gguf "$IN/tiny" --metadata "$v" --outfile "$W/out/x.gguf"
done
# unknown flags / commands / missing args; bare bitnet-convert prints its help (exit 0)
run ok "no args"
run fail "unknown command" frobnicate
run fail "unknown flag" inspect --frob "$G"
for c in hf2gguf requant codegen verify inspect run perplexity tokenize embed dummy; do
	run fail "$c no args" "$c"
	run fail "$c extra args" "$c" a b c d
done
run ok "inspect works" inspect "$G"
run ok "run works" run -m "$G" --ids 1,2 -n 1

# ---------------------------------------------------------------- summary
echo "SUMMARY inputs=$N runs=$RUNS hard_findings=$HARD multiline_stderr=$MULTI accepted_exit0_of_any_or_fail=$OK0 workdir=$W"
[ "$HARD" -eq 0 ]
