/**
 * How many GPUs a CUDA process of the job will see: the GPUs it can open
 * (nvidia-gpus.ts), through CUDA_VISIBLE_DEVICES as CUDA reads it (CUDA's
 * documentation, "CUDA Environment Variables" and MPS's "CUDA_VISIBLE_DEVICES"):
 * a comma list of indices into the GPUs it can open, or of UUIDs, a UUID's
 * first characters with its "GPU-" sufficing when they name one GPU; the
 * list ends at the first entry that names none (0,2,-1,1 shows 0 and 2), and
 * an empty value shows none. A MIG device (MIG-…) is taken on its word. A
 * second mention of the same GPU is taken as the end of the list too
 * (CUDA enumerates a GPU once), and blanks around an entry are dropped:
 * nccl-run's reading where CUDA's documentation says nothing.
 */
import type { GpuFacts } from './node-readiness.js';

export interface VisibleGpus {
  count: number;
  /** How the count came about, for the evidence. */
  reason: string;
}

export function visibleGpus(gpus: GpuFacts): VisibleGpus {
  const openable = openableGpus(gpus);
  const present = `${openable.length} GPU${openable.length === 1 ? '' : 's'} here (${gpuSource(gpus)})`;
  if (gpus.cudaVisibleDevices === null) return { count: openable.length, reason: present };
  const shown = new Set<string>();
  for (const entry of gpus.cudaVisibleDevices.split(',').map((item) => item.trim())) {
    const gpu = cudaEntry(entry, openable);
    if (gpu === null || shown.has(gpu)) break;
    shown.add(gpu);
  }
  return {
    count: shown.size,
    reason: `CUDA_VISIBLE_DEVICES=${gpus.cudaVisibleDevices} shows ${shown.size} of the ${present}`,
  };
}

/** The GPUs a process can open: the driver's that have their /dev/nvidiaN, by minor; the device files alone where /proc does not list GPUs. */
function openableGpus(gpus: GpuFacts): { key: string; uuid: string | null }[] {
  if (gpus.driver.length === 0)
    return gpus.deviceFiles.map((minor) => ({ key: `minor ${minor}`, uuid: null }));
  return gpus.driver
    .filter((gpu) => gpu.minor !== null && gpus.deviceFiles.includes(gpu.minor))
    .map((gpu) => ({ key: gpu.busId, uuid: gpu.uuid }));
}

function gpuSource(gpus: GpuFacts): string {
  if (gpus.driver.length === 0)
    return gpus.deviceFiles.length === 0
      ? 'no /proc/driver/nvidia/gpus, no /dev/nvidiaN'
      : '/dev/nvidiaN; no /proc/driver/nvidia/gpus';
  return `/proc/driver/nvidia/gpus lists ${gpus.driver.length}, with ${gpus.deviceFiles.length} /dev/nvidiaN`;
}

/** The GPU one CUDA_VISIBLE_DEVICES entry names, as a key; null when it names none. */
function cudaEntry(entry: string, openable: { key: string; uuid: string | null }[]): string | null {
  if (/^\d+$/.test(entry)) return openable[Number(entry)]?.key ?? null;
  if (entry.startsWith('MIG-')) return entry;
  if (entry.startsWith('GPU-')) {
    const matches = openable.filter((gpu) => gpu.uuid?.startsWith(entry));
    return matches.length === 1 ? (matches[0]?.key ?? null) : null;
  }
  return null;
}
