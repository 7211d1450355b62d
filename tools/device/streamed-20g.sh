#!/usr/bin/env bash
# On the lent GPU machine, in one call of at most $LIMIT seconds (default 570): the streamed
# parameter path (bases read from host memory: split MSMs over windows of bases, H kept on the
# device) checked, then timed at 32 GiB on a smaller card's budget.
#  1. `cuzk selftest --backend cuda --quick` (resident parameters) and
#     `cuzk selftest --backend cuda --no-resident` (every proof streams its bases; the split
#     MSM conformance checks run the streamed split with several windows and tail chunks);
#  2. 32 GiB PoRep, timing only, the first $PARTS partitions (default 2) with
#     `--vram-budget $VRAM` (default 20GiB): tools/device/porep-snap-32g-timing.sh.
# Results under $OUT.
# usage: tools/device/streamed-20g.sh BINARY
set -uo pipefail
B=${1:?binary}
OUT=${OUT:-/tmp/out}
LIMIT=${LIMIT:-570}
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
left() { echo $((LIMIT - ($(date +%s) - start))); }
at() { echo "$1 at $(( $(date +%s) - start )) s"; }
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total,driver_version --format=csv,noheader
FX2=/tmp/fx2k
timeout "$(left)" "$B" fixtures --sector-size 2KiB --out "$FX2" > "$OUT/fixtures2k.log" 2>&1
at "2 KiB fixtures rc=$?"
timeout 120 "$B" selftest --backend cuda --quick --fixtures "$FX2" > "$OUT/selftest-quick.log" 2>&1
at "selftest --quick rc=$?"
grep -E "^FAIL|checks passed" "$OUT/selftest-quick.log" | cut -c1-240
timeout 240 "$B" selftest --backend cuda --no-resident --fixtures "$FX2" \
  > "$OUT/selftest-streamed.log" 2>&1
at "selftest --no-resident rc=$?"
grep -E "^FAIL|checks passed" "$OUT/selftest-streamed.log" | cut -c1-240
grep -E "split|2KiB|proof over" "$OUT/selftest-streamed.log" | cut -c1-200 | head -40
OUT="$OUT" FX=/tmp/fx32 RUNS=1 KINDS=porep PARTS=${PARTS:-2} VRAM=${VRAM:-20GiB} \
  timeout "$(( $(left) - 5 ))" bash "$here/porep-snap-32g-timing.sh" "$B"
at "32 GiB porep, budget ${VRAM:-20GiB}, done"
