#!/usr/bin/env bash
# Builds bitnet-convert for every supported target, vets the tree for each,
# and runs the bundled tiny model's `hf2gguf` + `verify` on the foreign
# targets this Debian amd64 host can execute:
#
#   linux/arm64    qemu-aarch64 (Debian package qemu-user)
#   linux/arm      qemu-arm     (qemu-user)
#   linux/386      qemu-i386    (qemu-user) with GODEBUG=asyncpreemptoff=1,
#                  and natively as well when the host kernel runs IA-32
#                  binaries (many VM kernels do not)
#   windows/amd64  wine         (Debian packages wine, wine64)
#
# Every target's GGUF must be byte-identical to the host's, and verify must
# pass; on the 32-bit targets a 3 GiB file and hyper-parameter products
# beyond int must fail with one line. The internal/osx tests (mmap, page release, free space, rename over
# an existing file) also run on each of those targets. .ci/run installs the
# packages; this script only checks they are there.
#
# Go 1.26 binaries need bcryptprimitives.dll (ProcessPrng), which Wine 8
# lacks: the script links a forwarding DLL (ProcessPrng → advapi32's
# SystemFunction036, the same CSPRNG) into a throw-away Wine prefix with the
# mingw-w64 linker (binutils-mingw-w64-x86-64). Nothing is downloaded.
#
# Why qemu-i386 needs GODEBUG=asyncpreemptoff=1 (docs/platforms.md has the
# experiments): Debian bookworm's qemu-i386 7.2 gives a thread the %gs TLS
# base of another thread once a signal handler has run in it. A static C
# program shows it too (glibc keeps its TLS behind %gs as Go 386 keeps g):
# four threads that signal themselves read each other's __thread variable.
# Go's runtime signals its own threads (SIGURG, asynchronous preemption), so
# every Go 386 program dies within milliseconds ("morestack on gsignal",
# "bad g in signal handler"), whatever -cpu, GO386 or -ldflags. With
# asynchronous preemption off no signal is delivered unless one is sent, and
# hf2gguf + verify run reliably; a test that gets SIGCHLD (it starts a child
# process) would still crash, so TestProcessAlive is skipped there.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
model=$root/testdata/golden/tiny-bitnet/hf

targets="linux/amd64 linux/arm64 linux/arm linux/386 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"
for t in $targets; do
  os=${t%/*} arch=${t#*/}
  exe=$work/bitnet-convert-$os-$arch
  [ "$os" = windows ] && exe=$exe.exe
  echo "cross: build + vet $t"
  GOOS=$os GOARCH=$arch CGO_ENABLED=0 go build -o "$exe" ./cmd/bitnet-convert
  GOOS=$os GOARCH=$arch CGO_ENABLED=0 go vet ./...
done

# The host's file is the reference every target must reproduce.
(cd "$work" && ./bitnet-convert-linux-amd64 hf2gguf "$model" --model-name tiny --outfile host.gguf >/dev/null)
want=$(sha256sum "$work/host.gguf" | cut -d' ' -f1)

# run_target NAME RUNNER... : converts and verifies the tiny model with the
# target's binary under RUNNER, then runs the target's internal/osx tests.
run_target() {
  local name=$1; shift
  local exe=$work/bitnet-convert-$name out=tiny-$name.gguf
  [[ $name == windows-* ]] && exe=$exe.exe
  echo "cross: $name under ${*:-the host kernel}: hf2gguf + verify"
  (cd "$work" && "$@" "$exe" hf2gguf "$model" --model-name tiny --outfile "$out" --force)
  (cd "$work" && "$@" "$exe" verify --gguf "$out" --hf "$model")
  local got
  got=$(sha256sum "$work/$out" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    echo "cross: $name wrote a different GGUF than the host (sha256 $got, want $want)" >&2
    return 1
  fi
  local test=$work/osx-$name.test
  [[ $name == windows-* ]] && test=$test.exe
  GOOS=${name%-*} GOARCH=${name#*-} CGO_ENABLED=0 go test -c -o "$test" ./internal/osx
  # Under an emulator (qemu-user, wine) a read of a mapped file that shrank
  # does not reach Go as a fault at the mapped address (qemu-aarch64 reports
  # it as a nil dereference), so TestFaultError (H1) runs on the host only.
  local skip=${osx_skip:-}
  if [ $# -gt 0 ]; then skip=${skip:+$skip|}'^TestFaultError$'; fi
  (cd "$work" && "$@" "$test" -test.count=1 ${skip:+-test.skip "$skip"})
}

# check_too_big NAME RUNNER... : on a 32-bit target a file larger than int
# fails with one line naming it (a sparse 3 GiB GGUF: no disk is used).
check_too_big() {
  local name=$1; shift
  local big=$work/big.gguf err
  [ -e "$big" ] || { printf 'GGUF\x03\x00\x00\x00' > "$big"; truncate -s 3G "$big"; }
  echo "cross: $name: a 3 GiB GGUF fails with one line"
  if err=$("$@" "$work/bitnet-convert-$name" inspect "$big" 2>&1 >/dev/null); then
    echo "cross: $name: inspect of a 3 GiB file succeeded on a 32-bit build" >&2
    return 1
  fi
  echo "$err"
  if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] || [[ $err != *big.gguf*"does not fit in this 32-bit build"* ]]; then
    echo "cross: $name: want one line naming big.gguf and the 32-bit limit" >&2
    return 1
  fi
}

# check_int_products NAME RUNNER... : on a 32-bit target a GGUF whose
# hyper-parameter products (heads × head dimension) exceed int fails with one
# line naming the keys (runtime TestLoadHyperParamMessages, which expects the
# 32-bit message when int has 32 bits).
check_int_products() {
  local name=$1; shift
  local test=$work/runtime-$name.test
  echo "cross: $name: hyper-parameter products beyond int fail with one line"
  [ -e "$test" ] || GOOS=${name%-*} GOARCH=${name#*-} CGO_ENABLED=0 go test -c -o "$test" ./runtime
  (cd "$root/runtime" && "$@" "$test" -test.count=1 -test.run '^TestLoadHyperParamMessages$')
}

need() { command -v "$1" >/dev/null 2>&1 || { echo "cross: $1 not found (install Debian package $2)" >&2; exit 1; }; }
need qemu-aarch64 qemu-user
need qemu-arm qemu-user
need qemu-i386 qemu-user
need wine "wine wine64"
need x86_64-w64-mingw32-ld binutils-mingw-w64-x86-64

run_target linux-arm64 qemu-aarch64
run_target linux-arm qemu-arm
check_too_big linux-arm qemu-arm
check_int_products linux-arm qemu-arm
# qemu-i386: see the top of this file for why asynchronous preemption is off.
qemu386=(env GODEBUG=asyncpreemptoff=1 qemu-i386)
osx_skip='^TestProcessAlive$' run_target linux-386 "${qemu386[@]}"
check_too_big linux-386 "${qemu386[@]}"
check_int_products linux-386 "${qemu386[@]}"
if "$work/bitnet-convert-linux-386" --version >/dev/null 2>&1; then
  run_target linux-386
  check_too_big linux-386
  check_int_products linux-386
else
  echo "cross: this kernel does not run IA-32 binaries; linux/386 ran under qemu-i386 only"
fi

# A private Wine prefix, with the ProcessPrng shim when Wine lacks the DLL.
export WINEPREFIX=$work/wine WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wineboot --init >/dev/null 2>&1 || true
wineserver -w || true
sys32=$WINEPREFIX/drive_c/windows/system32
if ! ls /usr/lib/x86_64-linux-gnu/wine/x86_64-windows/bcryptprimitives.dll >/dev/null 2>&1 && [ ! -e "$sys32/bcryptprimitives.dll" ]; then
  printf 'LIBRARY bcryptprimitives.dll\nEXPORTS\n  ProcessPrng = advapi32.SystemFunction036\n' > "$work/bcp.def"
  : > "$work/empty.s"
  x86_64-w64-mingw32-as -o "$work/empty.o" "$work/empty.s"
  x86_64-w64-mingw32-ld -shared -e 0 -o "$sys32/bcryptprimitives.dll" "$work/bcp.def" "$work/empty.o"
fi
run_target windows-amd64 wine
wineserver -k || true
echo "cross: all targets built; arm64, arm, 386 and windows/amd64 converted and verified the tiny model byte-identically"
