"""The GPU check's job (issue 31): one all_reduce between two "nodes", timed.

Run by torchrun, one process per node (--nproc-per-node=1), both on the one
GPU: each node's agent has its own NCCL_HOSTID, so NCCL sees two hosts and
connects them with its network transport, as between real nodes. Each rank
prints, on stdout:
  GPU_CHECK_ENV {...}     the variables it got (what nccl-run exported reaches NCCL
                          through these), and its pid (gpu-check.sh stops a worker left behind)
  GPU_CHECK_RESULT {...}  rank, ranks, bytes, iters, seconds (mean per all_reduce), correct
and NCCL writes its own log where NCCL_DEBUG_FILE says. Timing follows
nccl-tests: after a first all_reduce (which connects the channels, and whose
sum is checked) and a warm-up, `iters` all_reduces run back to back and the
elapsed time over a final synchronize is divided by their number. `iters` is
cut so that the timed loop takes about --seconds at most.

Options:
  --mb N           tensor size in MiB of float32 (default 256)
  --iters K        timed all_reduces at most (default 5)
  --seconds S      time the timed loop may take, from the warm-up's (default 20)
  --backend NAME   nccl (default); gloo on CPU for a rehearsal without a GPU
"""

import argparse
import json
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

SEEN = (
    "NCCL_SOCKET_IFNAME",
    "NCCL_SOCKET_FAMILY",
    "GLOO_SOCKET_IFNAME",
    "NCCL_HOSTID",
    "NCCL_DEBUG",
    "MASTER_ADDR",
    "MASTER_PORT",
    "RANK",
    "WORLD_SIZE",
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=256)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--backend", choices=("nccl", "gloo"), default="nccl")
    args = parser.parse_args()

    seen = {name: os.environ.get(name) for name in SEEN}
    print("GPU_CHECK_ENV " + json.dumps({**seen, "pid": os.getpid()}), flush=True)
    if args.backend == "nccl":
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
        # device_id: the communicator is made here, so a failure shows at init.
        dist.init_process_group("nccl", timeout=timedelta(seconds=90), device_id=device)
        sync = torch.cuda.synchronize
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=timedelta(seconds=90))
        sync = lambda: None  # noqa: E731
    rank, ranks = dist.get_rank(), dist.get_world_size()

    elements = int(args.mb * 2**20) // 4
    tensor = torch.full((elements,), float(rank + 1), device=device)
    dist.all_reduce(tensor)
    sync()
    correct = bool(torch.all(tensor == ranks * (ranks + 1) / 2).item())

    start = time.perf_counter()
    dist.all_reduce(tensor)
    sync()
    warm = time.perf_counter() - start
    iters = max(1, min(args.iters, int(args.seconds / max(warm, 1e-6))))
    # Every rank times the same count: rank 0 decides it, the others follow.
    count = torch.tensor([iters], device=device)
    dist.broadcast(count, 0)
    iters = int(count.item())

    sync()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(tensor)
    sync()
    seconds = (time.perf_counter() - start) / iters

    result = {
        "rank": rank,
        "ranks": ranks,
        "bytes": elements * 4,
        "iters": iters,
        "seconds": seconds,
        "correct": correct,
    }
    print("GPU_CHECK_RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
