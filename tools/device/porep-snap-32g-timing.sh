#!/usr/bin/env bash
# On the lent GPU machine, with a stripped cuda build of cuzk: the 32 GiB PoRep C2 and
# SnapDeals TIMING-ONLY benchmarks (random-value inputs of the real shape, random-point
# parameters of the circuits' exact sizes: nothing is verified, every figure is timing only).
#  1. `cuzk fixtures --sector-size 32GiB` (PoSt inputs and the timing-only inputs) unless
#     $FX already holds them;
#  2. `cuzk bench scale --kind $KIND --backend cuda --runs $RUNS` for KIND in $KINDS (default
#     "porep snap"): PCE extraction (first run) or load, the parameters made in memory
#     (about 47 GB for PoRep), one row per partition, peak RSS and peak VRAM.
# $VRAM (e.g. 20GiB) runs the GPU as a card of that size; $PARTS (e.g. 3) proves only the
# first PARTS partitions of each proof. Each run prints the device timeline of every partition
# and how the witness splits by value. Results under $OUT.
# usage: tools/device/porep-snap-32g-timing.sh BINARY
set -uo pipefail
B=${1:?binary}
FX=${FX:-/tmp/fx32}
OUT=${OUT:-/tmp/out}
RUNS=${RUNS:-1}
KINDS=${KINDS:-porep snap}
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total --format=csv,noheader
if ! grep -q timing_only "$FX/manifest.json" 2>/dev/null; then
  /usr/bin/time -v "$B" fixtures --sector-size 32GiB --out "$FX" > "$OUT/fixtures32.log" 2>&1
fi
grep -E "done in|Maximum resident|Elapsed" "$OUT/fixtures32.log" 2>/dev/null
extra=()
[ -n "${VRAM:-}" ] && extra=(--vram-budget "$VRAM")
[ -n "${PARTS:-}" ] && extra+=(--partitions "$PARTS")
for k in $KINDS; do
  /usr/bin/time -v "$B" --cache "$FX/cache" bench scale --fixtures "$FX" --kind "$k" \
    --runs "$RUNS" --backend cuda "${extra[@]}" > "$OUT/scale-$k.log" 2>&1
  echo "bench scale $k rc=$?"
  grep -vE "^\s+(Command|User|System|Percent|Average|Exit|Page|Major|Minor|Vol|Invol|Swaps|File|Socket|Signals|Sw)" "$OUT/scale-$k.log" | cut -c1-240
done
