/**
 * The NVIDIA GPUs of this node, from files only: the driver's list
 * (/proc/driver/nvidia/gpus/BUS/information, one folder per GPU, naming its
 * device minor and UUID) and the device files a process can open
 * (/dev/nvidiaN; a container gets only those it was given: `--gpus`, the
 * device plugin).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { attempt } from '../host/attempt.js';
import { readSysfsText } from '../host/sysfs-text.js';
import type { DriverGpu } from './node-readiness.js';

export function readDriverGpus(root: string): DriverGpu[] {
  const dir = join(root, '/proc/driver/nvidia/gpus');
  return (attempt(() => readdirSync(dir)) ?? []).sort().map((busId) => {
    const information = readSysfsText(join(dir, busId, 'information')) ?? '';
    const field = (name: string) =>
      new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(information)?.[1] ?? null;
    const minor = field('Device Minor');
    return {
      busId,
      minor: minor !== null && /^\d+$/.test(minor) ? Number(minor) : null,
      uuid: field('GPU UUID'),
    };
  });
}

/** The N of each /dev/nvidiaN (not nvidiactl, nvidia-uvm, nvidia-caps). */
export function readGpuDeviceFiles(root: string): number[] {
  return (attempt(() => readdirSync(join(root, '/dev'))) ?? [])
    .map((name) => /^nvidia(\d+)$/.exec(name)?.[1])
    .filter((minor) => minor !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}
