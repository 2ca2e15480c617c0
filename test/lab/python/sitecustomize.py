"""LAB WORKAROUND for Debian's python3-torch 2.6, never product behaviour.

Debian builds torch 2.6 without libuv, yet TCPStore defaults to
use_libuv=True, so every rendezvous fails with "use_libuv was requested but
PyTorch was build without libuv support" (pytorch/pytorch#148283), and
USE_LIBUV=0 alone does not reach the elastic agent's static rendezvous.
This module (on PYTHONPATH only for the lab's torchrun, test/lab/debian-root.ts)
makes the default False: a TCPStore subclass swapped into torch.distributed
and into every torch.distributed module already holding the original, before
the elastic modules import it by name.
"""

import sys

import torch.distributed as dist

_TCPStore = dist.TCPStore


class TCPStore(_TCPStore):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("use_libuv", False)
        super().__init__(*args, **kwargs)


for _name, _module in list(sys.modules.items()):
    if _name.startswith("torch.distributed") and getattr(_module, "TCPStore", None) is _TCPStore:
        _module.TCPStore = TCPStore
