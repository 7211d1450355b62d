"""Curio's cuzk client, as its Go code (lib/ffi/cuzk_funcs.go, lib/cuzk/client.go) sends.

Only Prove, over plaintext gRPC with no token, each call with Curio's 30-minute deadline and
its exact request shapes: ids `porep-<miner>-<sector>`, `snap-<miner>-<sector>`,
`wdpost-<miner>-0-<randomness[:8] printed with Go's %d>`, `winpost-<miner>-<randomness[:8]
hex>`; PoRep's C1 output in the {SectorNum, Phase1Out, SectorSize} wrapper; both chain
partitions of a WindowPoSt deadline under one id, concurrently, as two Curio tasks do.

usage: curio.py STUBS_DIR ADDR FIXTURES_DIR
Prints one JSON object; the Rust test verifies every proof in it.
"""
import base64
import json
import os
import sys
import threading
import time

stubs, addr, fixtures = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, stubs)

import grpc  # noqa: E402
from cuzk.v1 import proving_pb2 as pb  # noqa: E402
from cuzk.v1 import proving_pb2_grpc as pbg  # noqa: E402

PROVE_TIMEOUT = 30 * 60  # Curio's Cuzk.ProveTimeout default
MSG = 256 << 20

m = json.load(open(os.path.join(fixtures, "manifest.json")))
miner = m["miner_id"]
size = m["sector_size"]


def read(rel):
    return open(os.path.join(fixtures, rel), "rb").read()


def go_bytes(b):
    """Go's fmt %d of a []byte: [12 200 3 ...]."""
    return "[" + " ".join(str(x) for x in b) + "]"


porep = m["porep"]
wrapped = json.dumps(
    {
        "SectorNum": porep["sector_number"],
        "Phase1Out": base64.b64encode(read(porep["c1_json"])).decode(),
        "SectorSize": size,
    }
).encode()
snap = m["snap"]
win, wd = m["winning"], m["window"]
win_rand, wd_rand = bytes.fromhex(win["randomness"]), bytes.fromhex(wd["randomness"])
assert win_rand[31] & 0xC0 == 0 and wd_rand[31] & 0xC0 == 0, "Curio masks randomness[31] &= 0x3f"

requests = {
    "porep": pb.SubmitProofRequest(
        request_id="porep-%d-%d" % (miner, porep["sector_number"]),
        proof_kind=pb.POREP_SEAL_COMMIT,
        sector_size=size,
        registered_proof=porep["registered_proof"],
        priority=pb.NORMAL,
        vanilla_proof=wrapped,
        sector_number=porep["sector_number"],
        miner_id=miner,
    ),
    "snap": pb.SubmitProofRequest(
        request_id="snap-%d-%d" % (miner, snap["sector_number"]),
        proof_kind=pb.SNAP_DEALS_UPDATE,
        sector_size=size,
        registered_proof=snap["registered_proof"],
        priority=pb.NORMAL,
        vanilla_proofs=[read(v) for v in snap["vanilla"]],
        sector_number=snap["sector_number"],
        miner_id=miner,
        comm_r_old=bytes.fromhex(snap["comm_r_old"]),
        comm_r_new=bytes.fromhex(snap["comm_r_new"]),
        comm_d_new=bytes.fromhex(snap["comm_d_new"]),
    ),
    "winning": pb.SubmitProofRequest(
        request_id="winpost-%d-%s" % (miner, win_rand[:8].hex()),
        proof_kind=pb.WINNING_POST,
        sector_size=size,
        registered_proof=win["registered_proof"],
        priority=pb.CRITICAL,
        vanilla_proofs=[read(v) for v in win["vanilla"]],
        miner_id=miner,
        randomness=win_rand,
    ),
}
# Two chain partitions of one deadline: one sector each, the same id, partition index 0.
for i, v in enumerate(wd["vanilla"][:2]):
    requests["window-%d" % i] = pb.SubmitProofRequest(
        request_id="wdpost-%d-%d-%s" % (miner, 0, go_bytes(wd_rand[:8])),
        proof_kind=pb.WINDOW_POST_PARTITION,
        sector_size=size,
        registered_proof=wd["registered_proof"],
        priority=pb.HIGH,
        vanilla_proofs=[read(v)],
        miner_id=miner,
        randomness=wd_rand,
        partition_index=0,
    )

channel = grpc.insecure_channel(
    addr,
    options=[("grpc.max_send_message_length", MSG), ("grpc.max_receive_message_length", MSG)],
)
grpc.channel_ready_future(channel).result(timeout=60)
stub = pbg.ProvingEngineStub(channel)

out = {}


def prove(name, req):
    t = time.time()
    try:
        r = stub.Prove(pb.ProveRequest(submit=req), timeout=PROVE_TIMEOUT).result
        out[name] = {
            "status": pb.AwaitProofResponse.Status.Name(r.status),
            "proof": r.proof.hex(),
            "error": r.error_message,
            "job_id": r.job_id,
            "request_id": req.request_id,
            "seconds": round(time.time() - t, 2),
        }
    except grpc.RpcError as e:
        out[name] = {"status": "RPC " + e.code().name, "error": e.details()}


# Curio's tasks run concurrently.
threads = [threading.Thread(target=prove, args=(n, r)) for n, r in requests.items()]
for t in threads:
    t.start()
for t in threads:
    t.join()

# A task retried (same id, same request) gets the same proof back.
prove("porep-retry", requests["porep"])
prove("window-1-retry", requests["window-1"])

# A task whose context is cancelled (Go cancels the call: RST_STREAM) cancels its job.
gone = pb.SubmitProofRequest()
gone.CopyFrom(requests["porep"])
gone.request_id = "porep-%d-%d" % (miner, 99)
call = stub.Prove.future(pb.ProveRequest(submit=gone), timeout=PROVE_TIMEOUT)
deadline = time.time() + 120
while True:
    try:
        stub.AwaitProof(pb.AwaitProofRequest(job_id=gone.request_id, timeout_ms=1))
        break
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.NOT_FOUND or time.time() > deadline:
            raise
        time.sleep(0.05)
call.cancel()
# A wait that starts before the cancellation reaches the daemon is another waiter, which keeps
# the job alive by design: watch through GetStatus (no waiter) until nothing is queued or
# running, then read the job.
deadline = time.time() + 300
while any(q.pending or q.in_progress for q in stub.GetStatus(pb.GetStatusRequest()).queues):
    if time.time() > deadline:
        raise RuntimeError("the cancelled job never left the queues")
    time.sleep(0.05)
a = stub.AwaitProof(pb.AwaitProofRequest(job_id=gone.request_id, timeout_ms=1))
out["cancelled_by_client"] = pb.AwaitProofResponse.Status.Name(a.status)

print(json.dumps(out))
