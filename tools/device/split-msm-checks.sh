#!/usr/bin/env bash
# On the lent GPU machine, with a stripped cuda build of cuzk (and optionally a baseline build
# of main): the checks a change to the GPU proving path needs before a 32 GiB run.
#  1. `cuzk selftest --backend cuda`: the device conformance suite (split MSMs up to 2^22 G1
#     and 2^18 G2 over zeros, ones, r-1, a witness mix and random scalars; whole proofs to
#     2^17 byte-identical to the CPU's) and 2 KiB proofs of all four kinds verified by
#     filecoin-proofs (fixtures made there first, under $FX);
#  2. `cuzk bench gpu --split $SPLIT` (default 20,24,26,27): the split MSM beside sppark's
#     Pippenger on the same bases and scalars, dense and a witness mix;
#  3. with BASE: `cuzk bench engine --backend cuda` (2 KiB, 40 PoRep jobs, 8 synthesis
#     threads, 9 WinningPoSt runs) with the baseline, then with the new build.
# Results under $OUT.
# usage: tools/device/split-msm-checks.sh BINARY [BASE]
set -uo pipefail
B=${1:?binary}
BASE=${2:-}
OUT=${OUT:-/tmp/out}
FX=${FX:-/tmp/fx2k}
SPLIT=${SPLIT:-20,24,26,27}
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total,driver_version --format=csv,noheader
nproc
if [ ! -f "$FX/manifest.json" ]; then
  /usr/bin/time -v "$B" fixtures --sector-size 2KiB --out "$FX" > "$OUT/fixtures2k.log" 2>&1
  echo "fixtures rc=$?: $(grep -E 'fixtures for|Elapsed' "$OUT/fixtures2k.log" | tr '\n' ' ' | cut -c1-300)"
fi
/usr/bin/time -v "$B" selftest --backend cuda --fixtures "$FX" > "$OUT/selftest.log" 2>&1
echo "selftest rc=$?"
grep -E "^FAIL|checks passed|Elapsed|Maximum resident" "$OUT/selftest.log" | cut -c1-240
grep -E "split MSM over (4194304|262144) points|proof over 2\^17|2KiB" "$OUT/selftest.log" | cut -c1-200
/usr/bin/time -v "$B" bench gpu --split "$SPLIT" --g1 20 --g2 20 --ntt 20 --leak-proofs 0 --runs 3 \
  > "$OUT/bench-gpu.log" 2>&1
echo "bench gpu rc=$?"
grep -E "^\||Elapsed|Maximum resident|Error|error" "$OUT/bench-gpu.log" | cut -c1-240
if [ -n "$BASE" ]; then
  for bin in "$BASE" "$B"; do
    /usr/bin/time -v "$bin" bench engine --backend cuda --fixtures "$FX" --porep-jobs 40 \
      --synthesis-threads 8 --winning-runs 9 > "$OUT/engine-$(basename "$bin").log" 2>&1
    echo "bench engine $(basename "$bin") rc=$?"
    grep -E "^\||Elapsed" "$OUT/engine-$(basename "$bin").log" | cut -c1-200
  done
fi
