/**
 * Reads what the readiness checks need from this node (node-readiness.ts),
 * from files only, no process spawned: statfs of /dev/shm, the limits and
 * capabilities of the process that becomes torchrun (/proc/PID/limits and
 * status), /sys/class/net/IF/{mtu,device/vendor},
 * /proc/sys/net/ipv4/conf/{all,IF}/rp_filter, /proc/driver/nvidia/gpus and
 * /dev/nvidiaN, /sys/devices/system/cpu/online, /sys/module/nvidia_peermem,
 * and the markers of a container. About twenty small reads.
 */
import { accessSync, constants, existsSync, statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { attempt } from '../host/attempt.js';
import { readSysfsText } from '../host/sysfs-text.js';
import { cpuListCount } from './cpu-list.js';
import type { NodeReadiness, ShmFacts } from './node-readiness.js';
import { readDriverGpus, readGpuDeviceFiles } from './nvidia-gpus.js';
import { parseProcLimit } from './proc-limits.js';
import { readUserContexts } from './user-context.js';

/** statfs(2)'s f_type of a tmpfs (include/uapi/linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;
/** CAP_IPC_LOCK (include/uapi/linux/capability.h). */
const CAP_IPC_LOCK = 14n;

export interface ReadFrom {
  /** Where the file system is mounted: '' for this host, a fixture tree in tests. */
  root?: string;
  /**
   * The process that becomes torchrun, whose limits it keeps: bin/nccl-run's
   * shell (its pid, the hand-over's), which execs it. Not Node's own: Node
   * raises its soft RLIMIT_NOFILE to the hard limit as it starts (node.cc
   * PlatformInit), so /proc/self/limits says more than torchrun gets, except
   * where Node itself execs (process.execve). 'self' by default.
   */
  launcher?: number | 'self';
}

/**
 * env: the job's environment (CUDA_VISIBLE_DEVICES as torchrun will pass it,
 * KUBERNETES_SERVICE_HOST, SLURM_JOB_ID); iface: the chosen interface, null
 * when none.
 */
export function readNodeReadiness(
  env: Readonly<Record<string, string | undefined>>,
  iface: string | null,
  { root = '', launcher = 'self' }: ReadFrom = {},
): NodeReadiness {
  const limits = readSysfsText(join(root, `/proc/${launcher}/limits`));
  const status = readSysfsText(join(root, `/proc/${launcher}/status`)) ?? '';
  const statusField = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status)?.[1];
  const capEff = statusField('CapEff');
  const allowed = statusField('Cpus_allowed_list');
  const online = readSysfsText(join(root, '/sys/devices/system/cpu/online'));
  return {
    shm: readShm(root),
    memlock: limits === null ? null : parseProcLimit(limits, 'Max locked memory'),
    nofile: limits === null ? null : parseProcLimit(limits, 'Max open files'),
    ipcLock:
      capEff === undefined || !/^[0-9a-f]+$/i.test(capEff)
        ? null
        : ((BigInt(`0x${capEff}`) >> CAP_IPC_LOCK) & 1n) === 1n,
    gpuDirect: existsSync(join(root, '/sys/module/nvidia_peermem')),
    cpus: {
      online: online === null ? null : cpuListCount(online),
      allowed: allowed === undefined ? null : cpuListCount(allowed),
    },
    network: iface === null ? null : readNetwork(root, iface),
    gpus: {
      driver: readDriverGpus(root),
      deviceFiles: readGpuDeviceFiles(root),
      cudaVisibleDevices: env.CUDA_VISIBLE_DEVICES ?? null,
      nvidiaVisibleDevices: env.NVIDIA_VISIBLE_DEVICES ?? null,
    },
    contexts: readUserContexts(env, root),
  };
}

function readShm(root: string): ShmFacts {
  const path = '/dev/shm';
  const at = join(root, path);
  const none = { path, sizeBytes: 0, freeBytes: 0, blockBytes: 4096, tmpfs: false };
  const stat = attempt(() => statSync(at));
  if (stat === undefined) return { ...none, unusable: `${path} does not exist` };
  if (!stat.isDirectory()) return { ...none, unusable: `${path} is not a directory` };
  const denied = writeDenied(at);
  const fs = attempt(() => statfsSync(at));
  if (fs === undefined) return { ...none, unusable: `statfs of ${path} fails` };
  return {
    path,
    unusable: denied === null ? null : `${path} cannot be written (${denied})`,
    sizeBytes: fs.blocks * fs.bsize,
    freeBytes: fs.bavail * fs.bsize,
    blockBytes: fs.bsize,
    tmpfs: fs.type === TMPFS_MAGIC,
  };
}

/** access(W_OK)'s error code (EROFS for a read-only mount, EACCES), or null when it may be written. */
function writeDenied(path: string): string | null {
  try {
    accessSync(path, constants.W_OK);
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'denied';
  }
}

function readNetwork(root: string, iface: string): NonNullable<NodeReadiness['network']> {
  const integer = (path: string) => {
    const text = readSysfsText(join(root, path));
    return text !== null && /^-?\d+$/.test(text) ? Number(text) : null;
  };
  return {
    interface: iface,
    mtu: integer(`/sys/class/net/${iface}/mtu`),
    vendor: readSysfsText(join(root, `/sys/class/net/${iface}/device/vendor`)),
    rpFilter: {
      all: integer('/proc/sys/net/ipv4/conf/all/rp_filter'),
      interface: integer(`/proc/sys/net/ipv4/conf/${iface}/rp_filter`),
    },
  };
}
