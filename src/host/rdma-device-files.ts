/**
 * Whether NCCL can open the RDMA devices here. NCCL 2.22 lists them with
 * ibv_get_device_list (src/transport/net_ib.cc ncclIbInit), and rdma-core
 * lists a device only when (libibverbs/init.c find_sysfs_devs)
 * /sys/class/infiniband_verbs/uverbsN/ibdev names it and its character device
 * /dev/infiniband/uverbsN exists (try_access_device: stat). A container
 * started without `--device /dev/infiniband/...` sees the devices in sysfs
 * and has no such file: NCCL finds no device and falls back to sockets.
 * (Opening may still fail where a device cgroup denies it; that only an open
 * would tell, and nccl-run opens nothing.)
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { attempt } from './attempt.js';
import { readSysfsText } from './sysfs-text.js';

/** RDMA device name → its uverbs device (Documentation/ABI/stable/sysfs-class-infiniband: uverbsN/ibdev). */
export function readVerbsDevices(sysRoot: string): Map<string, string> {
  const classDir = join(sysRoot, 'class/infiniband_verbs');
  const verbs = new Map<string, string>();
  // abi_version sits beside the uverbsN directories and has no ibdev.
  for (const name of attempt(() => readdirSync(classDir)) ?? []) {
    const ibdev = readSysfsText(join(classDir, name, 'ibdev'));
    if (ibdev !== null) verbs.set(ibdev, name);
  }
  return verbs;
}

/** The entries of /dev/infiniband that stat() finds, as rdma-core tests them (a dangling link does not count). */
export function readDeviceFiles(devRoot: string): string[] {
  const dir = join(devRoot, 'infiniband');
  return (attempt(() => readdirSync(dir)) ?? [])
    .filter((name) => attempt(() => statSync(join(dir, name))) !== undefined)
    .sort();
}
