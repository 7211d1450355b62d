#!/usr/bin/env bash
# On the lent GPU machine, with a stripped cuda build of cuzk:
#  1. 2 KiB fixtures and the quick CUDA selftest (the conformance suite, whose checks include
#     refusing an operation under another device's guard);
#  2. a fault drill on the daemon over gRPC: the GPU plus the CPU fallback, the GPU's proof
#     number $DRILL (default 3) breaking its CUDA context. Every request must still get its
#     proof, status must show the GPU quarantined with the CUDA error, a probe must keep it
#     out, later requests must be served, and SIGTERM must stop the daemon cleanly;
#  3. the in-process fault-containment check (two devices for one GPU refused, concurrent
#     MSMs under a foreign guard refused, a fault mid-job), which breaks the context: last.
# Results under $OUT.
# usage: tools/device/daemon-fault-drill.sh BINARY
set -uo pipefail
B=${1:?binary}
FX=/tmp/fx
OUT=${OUT:-/tmp/out}
DRILL=${DRILL:-3}
ADDR=127.0.0.1:9821
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total,memory.free --format=csv | tee "$OUT/nvidia-smi.txt"
t0=$(date +%s)
[ -f "$FX/manifest.json" ] || "$B" fixtures --sector-size 2KiB --out "$FX" > "$OUT/fixtures.log" 2>&1 || { tail "$OUT/fixtures.log"; exit 1; }
echo "fixtures: $(( $(date +%s) - t0 )) s"
"$B" selftest --backend cuda --quick --fixtures "$FX" > "$OUT/selftest.log" 2>&1
echo "selftest rc=$?"; grep -E "FAIL|foreign|checks passed" "$OUT/selftest.log" | cut -c1-200

# The request flags of one kind, from the fixture manifest.
req() {
  python3 - "$FX" "$1" <<'PY'
import json, sys
fx, kind = sys.argv[1], sys.argv[2]
m = json.load(open(f"{fx}/manifest.json"))
a = ["--kind", kind, "--miner-id", str(m["miner_id"])]
if kind in ("winning-post", "window-post"):
    f = m["winning" if kind == "winning-post" else "window"]
    a += ["--registered-proof", str(f["registered_proof"]), "--randomness", f["randomness"],
          "--partition-index", str(f["partition_index"])]
elif kind == "snap":
    f = m["snap"]
    a += ["--registered-proof", str(f["registered_proof"]), "--comm-r-old", f["comm_r_old"],
          "--comm-r-new", f["comm_r_new"], "--comm-d-new", f["comm_d_new"]]
else:
    f = m["porep"]
    a += ["--input", f"{fx}/{f['c1_wrapped']}"]
for v in f.get("vanilla", []):
    a += ["--input", f"{fx}/{v}"]
print(" ".join(a))
PY
}

cat > /tmp/drill.toml <<TOML
[server]
listen = "$ADDR"
[params]
dir = "$FX/params"
cache_dir = "$FX/cache"
[devices]
backend = "cuda"
cpu_fallback = true
TOML
"$B" daemon --config /tmp/drill.toml --fault-drill-at-proof "$DRILL" 2> "$OUT/drill-daemon.log" &
pid=$!
for _ in $(seq 150); do "$B" client --addr "$ADDR" status >/dev/null 2>&1 && break; sleep 0.2; done
ok=0; n=0
for round in 1 2; do
  for kind in winning-post window-post snap porep; do
    n=$((n + 1))
    t=$(date +%s%N)
    if "$B" client --addr "$ADDR" prove $(req $kind) --request-id "drill-$round-$kind" --out "/tmp/drill-$round-$kind.proof" > /tmp/drill.out 2>&1; then
      ok=$((ok + 1)); r="ok $(stat -c %s /tmp/drill-$round-$kind.proof) bytes"
    else
      r="FAILED: $(tail -c 300 /tmp/drill.out)"
    fi
    printf "drill round %s %-13s %s (%d ms)\n" "$round" "$kind" "$r" "$(( ($(date +%s%N) - t) / 1000000 ))"
  done
  [ $round = 1 ] && "$B" client --addr "$ADDR" status > "$OUT/drill-status.txt" 2>&1
done
echo "drill: $ok of $n requests proved"
grep -iE "quarantin|cuda:|cpu" "$OUT/drill-status.txt" | cut -c1-220
gpu=$(grep -oE "cuda:[0-9a-f:.]+" "$OUT/drill-status.txt" | head -1)
"$B" client --addr "$ADDR" probe --device "$gpu" 2>&1 | cut -c1-220 | sed 's/^/probe: /'
"$B" client --addr "$ADDR" metrics | grep -E "^cuzk_device_(healthy|faults_total)" | tee "$OUT/drill-metrics.txt"
grep -E "device fault|quarantin|fault drill" "$OUT/drill-daemon.log" | head -5 | cut -c1-260
kill -TERM $pid; wait $pid; echo "daemon exit=$? after SIGTERM"

"$B" selftest --backend cuda --fault-containment --fixtures "$FX" > "$OUT/fault.log" 2>&1
echo "fault-containment rc=$?"
grep -E "PASS|FAIL|error|GPU" "$OUT/fault.log" | cut -c1-260
