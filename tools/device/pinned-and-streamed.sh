#!/usr/bin/env bash
# On the lent GPU machine, in one call of at most $LIMIT seconds (default 580): the pinned and
# streamed paths checked at small sizes, then timed at 32 GiB.
#  1. `cuzk selftest --backend cuda --quick --no-resident` (conformance with the streamed split
#     MSM over several windows and tail chunks; 2 KiB proofs of all four kinds, verified, with
#     every proof's bases streamed) and `--quick --no-filecoin` (resident);
#  2. 32 GiB PoRep, timing only, the first $PARTS partitions (default 2), parameters resident
#     (a, b and c pinned by bench scale);
#  3. the same with `--vram-budget $VRAM` (default 20GiB): parameters pinned in host memory
#     and streamed.
# ONLY=budget skips the resident run and the resident selftest (a short call). Results under
# $OUT.
# usage: tools/device/pinned-and-streamed.sh BINARY
set -uo pipefail
B=${1:?binary}
OUT=${OUT:-/tmp/out}
LIMIT=${LIMIT:-580}
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
left() { echo $((LIMIT - ($(date +%s) - start))); }
at() { echo "$1 at $(( $(date +%s) - start )) s"; }
mkdir -p "$OUT/resident" "$OUT/budget"
nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total,driver_version --format=csv,noheader
FX2=/tmp/fx2k
timeout 90 "$B" fixtures --sector-size 2KiB --out "$FX2" > "$OUT/fixtures2k.log" 2>&1
at "2 KiB fixtures rc=$?"
timeout 100 "$B" selftest --backend cuda --quick --no-resident --fixtures "$FX2" \
  > "$OUT/selftest-streamed.log" 2>&1
at "selftest --quick --no-resident rc=$?"
grep -E "^FAIL|checks passed" "$OUT/selftest-streamed.log" | cut -c1-240
if [ "${ONLY:-}" != budget ]; then
  timeout 60 "$B" selftest --backend cuda --quick --no-filecoin > "$OUT/selftest-resident.log" 2>&1
  at "selftest --quick --no-filecoin rc=$?"
  grep -E "^FAIL|checks passed" "$OUT/selftest-resident.log" | cut -c1-240
  OUT="$OUT/resident" FX=/tmp/fx32 RUNS=1 KINDS=porep PARTS=${PARTS:-2} \
    timeout "$(( $(left) - 150 ))" bash "$here/porep-snap-32g-timing.sh" "$B"
  at "32 GiB porep resident done"
fi
OUT="$OUT/budget" FX=/tmp/fx32 RUNS=1 KINDS=porep PARTS=${PARTS:-2} VRAM=${VRAM:-20GiB} \
  timeout "$(( $(left) - 3 ))" bash "$here/porep-snap-32g-timing.sh" "$B"
at "32 GiB porep budget ${VRAM:-20GiB} done"
