"""The stack as the running torch sees it, for the GPU check (issue 31).

Run by the interpreter torchrun's #! line names (gpu-check.sh), it prints
one JSON object: that Python, the torch it imports, the NCCL that torch
reports (torch.cuda.nccl.version()), the nvidia-nccl-cu* wheel pip recorded,
and the libnccl files the process has mapped once torch is imported (torch's
CUDA library links libnccl.so.2). test/device/checks.ts stackRows compares
it with what nccl-run read from files.
"""

import importlib.metadata
import json
import sys

import torch


def nccl_runtime():
    try:
        version = torch.cuda.nccl.version()
    except (AttributeError, RuntimeError):  # a torch built without NCCL (CPU)
        return None
    if isinstance(version, tuple):
        return ".".join(str(part) for part in version[:3])
    # Older torch: NCCL_VERSION_CODE, major*10000 + minor*100 + patch since 2.9.
    return f"{version // 10000}.{version // 100 % 100}.{version % 100}"


def nccl_wheel():
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"] or ""
        if name.lower().replace("_", "-").startswith("nvidia-nccl-cu"):
            path = getattr(dist, "_path", None)  # the .dist-info folder (PathDistribution)
            return {
                "name": name,
                "version": dist.version,
                "distInfo": None if path is None else str(path),
            }
    return None


def loaded_nccl():
    with open("/proc/self/maps") as maps:
        files = {line.split()[-1] for line in maps if len(line.split()) >= 6}
    return sorted(file for file in files if "/libnccl" in file)


print(
    json.dumps(
        {
            "executable": sys.executable,
            "prefix": sys.prefix,
            "basePrefix": sys.base_prefix,
            "torch": torch.__version__,
            "torchFile": torch.__file__,
            "cuda": torch.version.cuda,
            "cudaAvailable": torch.cuda.is_available(),
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "ncclRuntime": nccl_runtime(),
            "ncclWheel": nccl_wheel(),
            "loadedNccl": loaded_nccl(),
        }
    )
)
