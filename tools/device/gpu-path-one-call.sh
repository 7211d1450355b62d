#!/usr/bin/env bash
# On the lent GPU machine, in one call of at most $LIMIT seconds (default 570): the checks of
# the GPU proving path, then its 32 GiB timing, each step cut to the time left.
#  1. `cuzk selftest --backend cuda` (tools/device/split-msm-checks.sh says what it runs);
#  2. 32 GiB PoRep, timing only, the first $PARTS partitions (default 2) with parameters
#     resident (tools/device/porep-snap-32g-timing.sh);
#  3. `cuzk bench gpu --split $SPLIT` (default 24,27): the split MSM beside sppark's Pippenger;
#  4. with BASE: `cuzk bench engine --backend cuda` with the baseline, then the new build.
# A step that fails does not stop the ones after it, except that a failed selftest skips the
# 32 GiB run. Results under $OUT.
# usage: tools/device/gpu-path-one-call.sh BINARY [BASE]
set -uo pipefail
B=${1:?binary}
BASE=${2:-}
OUT=${OUT:-/tmp/out}
LIMIT=${LIMIT:-570}
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
left() { echo $((LIMIT - ($(date +%s) - start))); }
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total,driver_version --format=csv,noheader
echo "cores: $(nproc)"
FX2=/tmp/fx2k
timeout "$(left)" "$B" fixtures --sector-size 2KiB --out "$FX2" > "$OUT/fixtures2k.log" 2>&1
echo "2 KiB fixtures rc=$? at $(( $(date +%s) - start )) s"
timeout "$(( $(left) < 200 ? $(left) : 200 ))" "$B" selftest --backend cuda --fixtures "$FX2" \
  > "$OUT/selftest.log" 2>&1
st=$?
echo "selftest rc=$st at $(( $(date +%s) - start )) s"
grep -E "^FAIL|checks passed" "$OUT/selftest.log" | cut -c1-240
grep -E "split MSM over (4194304|262144) points, witness|proof over 2\^17|2KiB" "$OUT/selftest.log" | cut -c1-200
if [ "$st" = 0 ]; then
  OUT="$OUT" FX=/tmp/fx32 RUNS=1 KINDS=porep PARTS=${PARTS:-2} \
    timeout "$(( $(left) - 60 ))" bash "$here/porep-snap-32g-timing.sh" "$B"
  echo "32 GiB porep done at $(( $(date +%s) - start )) s"
fi
if [ "$(left)" -gt 60 ]; then
  timeout "$(( $(left) - 10 ))" "$B" bench gpu --split "${SPLIT:-24,27}" --g1 20 --g2 20 --ntt 20 \
    --leak-proofs 0 --runs 3 > "$OUT/bench-gpu.log" 2>&1
  echo "bench gpu rc=$? at $(( $(date +%s) - start )) s"
  grep -E "^\| G1 \|" "$OUT/bench-gpu.log" | cut -c1-240
fi
if [ -n "$BASE" ]; then
  for bin in "$BASE" "$B"; do
    [ "$(left)" -gt 40 ] || break
    timeout "$(( $(left) - 5 ))" "$bin" bench engine --backend cuda --fixtures "$FX2" \
      --porep-jobs 40 --synthesis-threads 8 --winning-runs 9 > "$OUT/engine-$(basename "$bin").log" 2>&1
    echo "bench engine $(basename "$bin") rc=$?"
    grep -E "^\|" "$OUT/engine-$(basename "$bin").log" | cut -c1-200
  done
fi
