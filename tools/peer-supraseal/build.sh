#!/usr/bin/env bash
# Builds the supraseal peer on a machine without a GPU driver: filecoin-proofs' cuda-supraseal
# feature also builds neptune's CUDA code, which links libcuda, so a link-time stand-in
# (every driver entry point returns an error) is made from cuda-driver-sys's declarations.
# The binary loads the real libcuda.so.1 on the GPU machine.
#
# usage: tools/peer-supraseal/build.sh     (needs nvcc: NVCC or PATH; see .ci/install-nvcc.sh)
# output: target/peer/release/peer-supraseal
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/target/peer
mkdir -p "$out/stub"
cargo fetch --manifest-path "$here/Cargo.toml" >/dev/null
sys=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cuda-driver-sys-*/ | head -1)
{
  echo '/* link-time stand-in for libcuda: every entry point returns CUDA_ERROR_UNKNOWN */'
  grep -ohE "pub fn cu[A-Za-z0-9_]+" "$sys"/src/*.rs | sed 's/pub fn //' | sort -u |
    sed 's/.*/int &(void) { return 999; }/'
} >"$out/stub/cuda_stub.c"
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$out/stub/libcuda.so.1" "$out/stub/cuda_stub.c"
ln -sf libcuda.so.1 "$out/stub/libcuda.so"
cd "$here"
CARGO_TARGET_DIR=$out LIBRARY_PATH=$out/stub${LIBRARY_PATH:+:$LIBRARY_PATH} \
  LD_LIBRARY_PATH=$out/stub cargo build --release
