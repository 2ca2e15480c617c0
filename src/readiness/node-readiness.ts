/**
 * What the readiness checks need from this node (SPEC "Readiness"), read once
 * from files by read-node-readiness.ts; every check is a pure function of it
 * and of the job's needs (needs.ts).
 */

/** A resource limit; 'unlimited' for RLIM_INFINITY. */
export type Limit = number | 'unlimited';

export interface ResourceLimit {
  soft: Limit;
  hard: Limit;
}

export interface ShmFacts {
  /** '/dev/shm'. */
  path: string;
  /** Why nothing can be put there (missing, not a directory, read-only), or null. */
  unusable: string | null;
  /** statfs: the file system's size, and what is free (f_bavail), in bytes; 0 when unusable. */
  sizeBytes: number;
  freeBytes: number;
  /** f_bsize: the unit tmpfs allocates in, a page. */
  blockBytes: number;
  /** Whether it is a tmpfs (f_type TMPFS_MAGIC); a plain folder is the container's disk. */
  tmpfs: boolean;
}

/** A GPU the NVIDIA driver lists (/proc/driver/nvidia/gpus/BUS/information). */
export interface DriverGpu {
  /** The PCI bus id, the folder's name: 0000:18:00.0. */
  busId: string;
  /** Device Minor: N of /dev/nvidiaN; null when the file does not say. */
  minor: number | null;
  /** GPU UUID: GPU-…; null when the file does not say. */
  uuid: string | null;
}

export interface GpuFacts {
  /** The driver's GPUs; empty where /proc/driver/nvidia is absent (no driver, or not in this container). */
  driver: DriverGpu[];
  /** The N of each /dev/nvidiaN present: the GPUs a process here can open. */
  deviceFiles: number[];
  /** The job's CUDA_VISIBLE_DEVICES as given; null when unset. */
  cudaVisibleDevices: string | null;
  /** NVIDIA_VISIBLE_DEVICES (what the container runtime was asked to expose); null when unset. */
  nvidiaVisibleDevices: string | null;
}

/** Where the job runs, from files and variables; each comes with its own fixes (user-context.ts). */
export type UserContext = 'kubernetes' | 'docker' | 'podman' | 'slurm';

export interface NodeReadiness {
  shm: ShmFacts;
  /** The limits torchrun inherits (read-node-readiness.ts: the launcher's /proc/PID/limits): bytes for memlock; null where unreadable. */
  memlock: ResourceLimit | null;
  nofile: ResourceLimit | null;
  /** CAP_IPC_LOCK in the launcher's effective set (/proc/PID/status CapEff): memory registration then ignores RLIMIT_MEMLOCK. */
  ipcLock: boolean | null;
  /** nvidia_peermem loaded (/sys/module/nvidia_peermem): GPUDirect RDMA, NCCL registers GPU memory for the bulk. */
  gpuDirect: boolean;
  /** Online CPUs (/sys/devices/system/cpu/online: os.cpu_count()) and this process's affinity (Cpus_allowed_list). */
  cpus: { online: number | null; allowed: number | null };
  /** The chosen interface; null when none was chosen. */
  network: {
    interface: string;
    /** /sys/class/net/IF/mtu. */
    mtu: number | null;
    /** /sys/class/net/IF/device/vendor (0x1d0f AWS, 0x1ae0 Google): NCCL's socket count per connection follows it. */
    vendor: string | null;
    /** /proc/sys/net/ipv4/conf/{all,IF}/rp_filter: the kernel filters by the larger. */
    rpFilter: { all: number | null; interface: number | null };
  } | null;
  gpus: GpuFacts;
  contexts: UserContext[];
}
