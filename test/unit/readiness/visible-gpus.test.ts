/**
 * CUDA_VISIBLE_DEVICES as CUDA reads it, over fake GPU facts (no GPU here):
 * indices and UUID prefixes into the GPUs a process can open, ending at the
 * first entry that names none.
 */
import { describe, expect, it } from 'vitest';
import { visibleGpus } from '../../../src/readiness/visible-gpus.js';
import { fakeGpus } from '../../fixtures/readiness.js';

describe('visibleGpus', () => {
  it.each([
    [null, 8],
    ['', 0],
    ['0,1,2,3', 4],
    ['2,1', 2],
    ['0,2,-1,1', 2],
    ['0,8', 1],
    ['0,0,1', 1],
    ['GPU-30000000', 1],
    ['GPU-3,GPU-4', 2],
    ['GPU-', 0],
    ['GPU-9', 0],
    ['MIG-GPU-10000000-1111-2222-3333-444444444444/1/0', 1],
    ['0, 1', 2],
    ['all', 0],
  ])('CUDA_VISIBLE_DEVICES=%j of 8 GPUs: %d', (value, count) => {
    expect(visibleGpus(fakeGpus(8, { cudaVisibleDevices: value })).count).toBe(count);
  });

  it('counts only the GPUs whose device file is here (a container given 2 of 8)', () => {
    const gpus = fakeGpus(8, { deviceFiles: [3, 5] });
    expect(visibleGpus(gpus)).toEqual({
      count: 2,
      reason: '2 GPUs here (/proc/driver/nvidia/gpus lists 8, with 2 /dev/nvidiaN)',
    });
    expect(visibleGpus({ ...gpus, cudaVisibleDevices: '1,2' }).count).toBe(1);
  });

  it('counts the device files alone where /proc lists no GPU', () => {
    expect(visibleGpus(fakeGpus(0, { deviceFiles: [0, 1] }))).toEqual({
      count: 2,
      reason: '2 GPUs here (/dev/nvidiaN; no /proc/driver/nvidia/gpus)',
    });
  });
});
