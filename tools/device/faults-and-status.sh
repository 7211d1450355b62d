#!/usr/bin/env bash
# On the lent GPU machine: 2 KiB fixtures, the quick CUDA selftest, the daemon's GetStatus on
# the GPU (ordinal, driver-free memory, health), then the fault-containment check (which
# breaks the GPU's context, so it runs last). Results under $OUT.
# usage: tools/device/faults-and-status.sh BINARY   (a stripped cuda build)
set -uo pipefail
B=${1:?binary}
FX=/tmp/fx
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total,memory.free --format=csv | tee "$OUT/nvidia-smi.txt"
t0=$(date +%s)
"$B" fixtures --sector-size 2KiB --out "$FX" > "$OUT/fixtures.log" 2>&1 || { tail "$OUT/fixtures.log"; exit 1; }
echo "fixtures: $(( $(date +%s) - t0 )) s"
"$B" selftest --backend cuda --quick --fixtures "$FX" > "$OUT/selftest.log" 2>&1
echo "selftest rc=$?"; grep -E "FAIL|checks passed" "$OUT/selftest.log"

cat > /tmp/cuzk.toml <<TOML
[server]
listen = "127.0.0.1:9820"
[params]
dir = "$FX/params"
cache_dir = "$FX/cache"
[devices]
backend = "cuda"
TOML
"$B" daemon --config /tmp/cuzk.toml 2> "$OUT/daemon.log" &
pid=$!
for _ in $(seq 100); do "$B" client --addr 127.0.0.1:9820 status >/dev/null 2>&1 && break; sleep 0.2; done
RAND=$(python3 -c "import json;print(json.load(open('$FX/manifest.json'))['winning']['randomness'])")
"$B" client --addr 127.0.0.1:9820 prove --kind winning-post --registered-proof 0 --miner-id 1000 \
  --randomness "$RAND" --input "$FX/inputs/winning-0.bin" --out /tmp/w.proof
echo "client prove rc=$? ($(stat -c %s /tmp/w.proof 2>/dev/null) bytes)"
"$B" client --addr 127.0.0.1:9820 status | tee "$OUT/status.txt"
"$B" client --addr 127.0.0.1:9820 metrics | grep -E "cuzk_device_(healthy|memory)" | tee -a "$OUT/status.txt"
nvidia-smi --query-gpu=memory.used,memory.free --format=csv,noheader | sed 's/^/nvidia-smi now: /' | tee -a "$OUT/status.txt"
kill -TERM $pid; wait $pid; echo "daemon exit=$?"

"$B" selftest --backend cuda --fault-containment --fixtures "$FX" > "$OUT/fault.log" 2>&1
echo "fault-containment rc=$?"
grep -E "PASS|FAIL|error|GPU|armed" "$OUT/fault.log" | cut -c1-240
