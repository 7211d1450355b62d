#!/usr/bin/env bash
# On the lent GPU machine, with a stripped cuda build of cuzk:
#  1. 32 GiB PoSt fixtures from sparse trees (`cuzk fixtures --sector-size 32GiB`);
#  2. the 32 GiB WinningPoSt proved with the CUDA backend $RUNS times (default 5), each proof
#     verified by filecoin-proofs inside `cuzk prove`; the first run includes the parameter
#     and PCE load;
#  3. `cuzk selftest --backend cuda --proof-log $LOG` (default 24): a synthetic circuit of
#     2^LOG constraints proved on the GPU and on the CPU with the same r and s, the bytes
#     compared and the proof verified.
# Results under $OUT.
# usage: tools/device/scale-post-and-identity.sh BINARY
set -uo pipefail
B=${1:?binary}
FX=/tmp/fx32
OUT=${OUT:-/tmp/out}
RUNS=${RUNS:-5}
LOG=${LOG:-24}
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total --format=csv,noheader
[ -f "$FX/manifest.json" ] || /usr/bin/time -v "$B" fixtures --sector-size 32GiB --out "$FX" > "$OUT/fixtures32.log" 2>&1
grep -E "PoSt inputs|Maximum resident|Elapsed" "$OUT/fixtures32.log"
args=$(python3 - "$FX" <<'PY'
import json, sys
fx = sys.argv[1]
m = json.load(open(f"{fx}/manifest.json"))
f = m["winning"]
a = ["--kind", "winning-post", "--miner-id", str(m["miner_id"]),
     "--registered-proof", str(f["registered_proof"]), "--randomness", f["randomness"]]
for v in f["vanilla"]:
    a += ["--input", f"{fx}/{v}"]
print(" ".join(a))
PY
)
for i in $(seq "$RUNS"); do
  /usr/bin/time -v "$B" --cache "$FX/cache" prove $args --params "$FX/params" --backend cuda \
    --out "$OUT/winning32.proof" > "$OUT/winning32-$i.log" 2>&1
  echo "winning32 run $i rc=$?: $(grep -E 'winning-post:|verified' "$OUT/winning32-$i.log" | tr '\n' ' ' | cut -c1-400)"
  grep -E "Maximum resident|Elapsed" "$OUT/winning32-$i.log" | tr -s ' ' | tr '\n' ' '; echo
done
/usr/bin/time -v "$B" selftest --backend cuda --proof-log "$LOG" --no-filecoin > "$OUT/identity.log" 2>&1
echo "selftest --proof-log $LOG rc=$?"
grep -E "PASS|FAIL|checks passed|Maximum resident|Elapsed" "$OUT/identity.log" | cut -c1-240
