import os, sys
import torch.distributed as dist
print("worker MASTER_ADDR=%s MASTER_PORT=%s" % (os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")), flush=True)
dist.init_process_group("gloo")
print("init ok rank", dist.get_rank(), "of", dist.get_world_size(), flush=True)
dist.destroy_process_group()
