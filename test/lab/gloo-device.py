"""
The Gloo device torch makes, case by case, on the fuzz's namespaced hosts
(test/lab/gloo-fuzz.ts): torch is imported once, then each case runs in a
forked child that enters the case's network namespace, takes its hostname
and /etc/hosts in namespaces of its own, marks the shim's log, and makes
the device as ProcessGroupGloo does: create_default_device() (the hostname)
with GLOO_SOCKET_IFNAME unset, else create_device(interface=) for its first
name. torch 2.x's tcp device listens as it is made, so the shim's log holds
the address Gloo bound. Cases come as JSON on stdin; one JSON line per case
on stdout: "ok", or the exception's class and first line.
"""

import json
import os
import socket
import subprocess
import sys

import torch.distributed as dist

cases = json.load(sys.stdin)
log = os.environ["GLOO_SHIM_LOG"]

for case in cases:
    pid = os.fork()
    if pid == 0:
        try:
            # The outer unshare made every mount private: the bind stays in this child.
            netns = os.open(case["netns"], os.O_RDONLY)
            os.setns(netns, os.CLONE_NEWNET)
            os.unshare(os.CLONE_NEWNS | os.CLONE_NEWUTS)
            subprocess.run(["mount", "--bind", case["hosts"], "/etc/hosts"], check=True)
            socket.sethostname(case["hostname"])
            with open(log, "a") as marker:
                marker.write(f"case {case['id']}\n")
        except Exception as error:  # noqa: BLE001 - the case could not be set up: the caller fails
            print(json.dumps({"case": case["id"], "setup": repr(error)}), flush=True)
            os._exit(1)
        outcome = "ok"
        try:
            ifname = case.get("GLOO_SOCKET_IFNAME")
            if ifname is None:
                dist.ProcessGroupGloo.create_default_device()
            else:
                dist.ProcessGroupGloo.create_device(interface=ifname.split(",")[0])
        except Exception as error:  # noqa: BLE001 - torch's failure is the case's answer
            first = str(error).strip().splitlines()
            outcome = f"{type(error).__name__}: {first[0] if first else ''}"
        print(json.dumps({"case": case["id"], "outcome": outcome}), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
