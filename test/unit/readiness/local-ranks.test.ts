/**
 * --nproc-per-node as torch's run.py determine_local_world_size resolves it
 * (read in 1.13, 2.6, 2.14), over fake GPU facts.
 */
import { describe, expect, it } from 'vitest';
import { localRanks } from '../../../src/readiness/local-ranks.js';
import { fakeGpus } from '../../fixtures/readiness.js';

const node = (gpus: number, online: number | null = 16, allowed: number | null = 4) => ({
  gpus: fakeGpus(gpus),
  cpus: { online, allowed },
});

describe('localRanks', () => {
  it.each([
    // value, GPUs, torch, count
    ['8', 0, '2.6.0', 8],
    [' 8 ', 0, '2.6.0', 8],
    ['+4', 0, '2.6.0', 4],
    ['1_6', 0, '2.6.0', 16],
    ['gpu', 4, '2.6.0', 4],
    ['auto', 4, '2.6.0', 4],
    ['auto', 0, '2.6.0', 16],
    ['cpu', 4, '1.13.1', 16],
    ['cpu', 4, '2.6.0', 16],
    ['cpu', 4, '2.14.1', 4],
    ['cpu', 4, null, 4],
  ] as const)('%j with %d GPUs on torch %s: %d', (value, gpus, torch, count) => {
    expect(localRanks(value, node(gpus), torch).count).toBe(count);
  });

  it("gpu without a GPU is torchrun's own refusal", () => {
    expect(localRanks('gpu', node(0), '2.6.0')).toEqual({
      count: null,
      refusal:
        '--nproc-per-node gpu: torchrun stops with "Cuda is not available." (0 GPUs here (no /proc/driver/nvidia/gpus, no /dev/nvidiaN))',
      reason: '0 GPUs here (no /proc/driver/nvidia/gpus, no /dev/nvidiaN)',
    });
  });

  it.each([['xpu'], ['8_'], ['eight'], ['']])(
    '%j counts nothing nccl-run reads, and refuses nothing',
    (value) => {
      expect(localRanks(value, node(8), '2.14.1')).toMatchObject({ count: null, refusal: null });
    },
  );

  it('says what it counted', () => {
    expect(localRanks('auto', node(0), '2.14.1').reason).toBe(
      '--nproc-per-node auto: 4 CPUs (this process may run on)',
    );
    expect(localRanks('cpu', node(0, null, null), '2.6.0')).toEqual({
      count: null,
      refusal: null,
      reason: '--nproc-per-node cpu: the CPU count could not be read',
    });
  });
});
