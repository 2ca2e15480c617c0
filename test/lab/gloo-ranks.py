"""One rank of the Gloo oracle (test/lab/gloo-oracle.ts): real torch, real Gloo.

argv: RANK MASTER PORT CASES_JSON. The two ranks meet once in a
TCPStore, then for each case, in step (a store barrier per case), this rank
sets its hostname and GLOO_SOCKET_IFNAME as the case says, writes a marker
into $GLOO_SHIM_LOG, and builds a 2-rank ProcessGroupGloo the way
init_process_group("gloo") does (torch reads GLOO_SOCKET_IFNAME and the
hostname each time a group is made), then all-reduces one element. It
prints one JSON line per case: "ok", or the exception's class and first line.
A case's "seconds" is the group's timeout (Gloo's connect waits five times it).
"""

import datetime
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist

rank = int(sys.argv[1])
master, port = sys.argv[2], int(sys.argv[3])
cases = json.loads(sys.argv[4])
log = os.environ["GLOO_SHIM_LOG"]

store = dist.TCPStore(master, port, 2, rank == 0, timeout=datetime.timedelta(seconds=60))
print(json.dumps({"torch": torch.__version__}), flush=True)
for case in cases:
    key = case["id"]
    store.set(f"{key}/ready/{rank}", "1")
    store.wait([f"{key}/ready/{1 - rank}"])
    mine = case["ranks"][rank]
    socket.sethostname(mine["hostname"])
    if mine.get("GLOO_SOCKET_IFNAME") is None:
        os.environ.pop("GLOO_SOCKET_IFNAME", None)
    else:
        os.environ["GLOO_SOCKET_IFNAME"] = mine["GLOO_SOCKET_IFNAME"]
    with open(log, "a") as marker:
        marker.write(f"case {key}\n")
    started = time.monotonic()
    try:
        timeout = datetime.timedelta(seconds=case["seconds"])
        group = dist.ProcessGroupGloo(dist.PrefixStore(key, store), rank, 2, timeout)
        tensor = torch.ones(1)
        group.allreduce([tensor]).wait()
        outcome = "ok" if tensor.item() == 2 else f"sum {tensor.item()}"
    except Exception as error:  # every failure is an answer here
        first = (str(error).splitlines() or [""])[0]
        outcome = f"{type(error).__name__}: {first[:300]}"
    seconds = round(time.monotonic() - started, 2)
    print(json.dumps({"case": key, "outcome": outcome, "seconds": seconds}), flush=True)
