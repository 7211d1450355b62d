"""A cuzk.v1 client in Python (grpcio), with stubs generated from proto/ by the test.

usage: client.py STUBS_DIR ADDR FIXTURES_DIR
Prints one JSON object with what it saw; the Rust test asserts on it.
"""
import json
import os
import sys
import time

stubs, addr, fixtures = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, stubs)

import grpc  # noqa: E402
from cuzk.v1 import proving_pb2 as pb  # noqa: E402
from cuzk.v1 import proving_pb2_grpc as pbg  # noqa: E402

manifest = json.load(open(os.path.join(fixtures, "manifest.json")))
channel = grpc.insecure_channel(addr)
grpc.channel_ready_future(channel).result(timeout=60)
stub = pbg.ProvingEngineStub(channel)


def post_request(kind_name, proto_kind, request_id):
    f = manifest[kind_name]
    return pb.SubmitProofRequest(
        request_id=request_id,
        proof_kind=proto_kind,
        registered_proof=f["registered_proof"],
        miner_id=manifest["miner_id"],
        randomness=bytes.fromhex(f["randomness"]),
        partition_index=f.get("partition_index", 0),
        vanilla_proofs=[open(os.path.join(fixtures, v), "rb").read() for v in f["vanilla"]],
    )


out = {}
r = stub.Prove(pb.ProveRequest(submit=post_request("winning", pb.WINNING_POST, "py-winning")))
out["prove_status"] = pb.AwaitProofResponse.Status.Name(r.result.status)
out["prove_proof_len"] = len(r.result.proof)
out["prove_error"] = r.result.error_message

s = stub.GetStatus(pb.GetStatusRequest())
out["gpus"] = [g.name for g in s.gpus]
out["completed"] = s.total_proofs_completed
out["srs"] = [e.circuit_id for e in s.loaded_srs]

stub.SubmitProof(post_request("window", pb.WINDOW_POST_PARTITION, "py-window"))
c = stub.CancelProof(pb.CancelProofRequest(job_id="py-window"))
a = stub.AwaitProof(pb.AwaitProofRequest(job_id="py-window", timeout_ms=0))
out["cancel_status"] = pb.AwaitProofResponse.Status.Name(a.status)

try:
    stub.SubmitProof(pb.SubmitProofRequest(request_id="py-bad", proof_kind=0))
    out["bad_kind_code"] = "OK"
except grpc.RpcError as e:
    out["bad_kind_code"] = e.code().name

print(json.dumps(out))
