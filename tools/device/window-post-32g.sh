#!/usr/bin/env bash
# On the lent GPU machine, with a stripped cuda build of cuzk: a 32 GiB WindowPoSt end to end.
#  1. `cuzk fixtures --sector-size 32GiB --window-params --backend cuda`: the sparse-tree PoSt
#     inputs, the WindowPoSt circuit's PCE (125M constraints) and its INSECURE parameters,
#     whose fixed-base multiplications run on the GPU (stage times in the log);
#  2. one full-partition WindowPoSt (2,349 sectors) proved with the CUDA backend and verified
#     by filecoin-proofs inside `cuzk prove`.
# Peak RSS of each step from /usr/bin/time; results under $OUT. The parameters take about
# 45 GB of the machine's 64 GB disk: nothing else large may sit under $FX.
# usage: tools/device/window-post-32g.sh BINARY
set -uo pipefail
B=${1:?binary}
FX=${FX:-/tmp/fx32}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total --format=csv,noheader
df -h /tmp | tail -1
/usr/bin/time -v "$B" fixtures --sector-size 32GiB --window-params --backend cuda --out "$FX" \
  > "$OUT/window-fixtures.log" 2>&1
echo "fixtures rc=$?"
grep -E "done in|QAP|device |Maximum resident|Elapsed|rror" "$OUT/window-fixtures.log" | cut -c1-240
ls -la "$FX/params" | grep -E "params|vk"
args=$(python3 - "$FX" <<'PY'
import json, sys
fx = sys.argv[1]
m = json.load(open(f"{fx}/manifest.json"))
f = m["window"]
a = ["--kind", "window-post", "--miner-id", str(m["miner_id"]),
     "--registered-proof", str(f["registered_proof"]), "--randomness", f["randomness"],
     "--partition-index", str(f["partition_index"])]
for v in f["vanilla"]:
    a += ["--input", f"{fx}/{v}"]
print(" ".join(a))
PY
)
/usr/bin/time -v "$B" --cache "$FX/cache" prove $args --params "$FX/params" --backend cuda \
  --out "$OUT/window32.proof" > "$OUT/window32.log" 2>&1
echo "window32 rc=$?"
grep -E "window-post:|verified|device |rror|Maximum resident|Elapsed" "$OUT/window32.log" | cut -c1-400
