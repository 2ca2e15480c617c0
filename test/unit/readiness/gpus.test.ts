/**
 * Visible GPUs against the local ranks, over fake GPU facts (no GPU here:
 * the driver's list and the device files are made up, as the NVIDIA driver
 * would show them).
 */
import { describe, expect, it } from 'vitest';
import type { ReadinessNeeds } from '../../../src/readiness/needs.js';
import { fakeGpus, findingOf, jobNeeds, nodeFacts } from '../../fixtures/readiness.js';

describe('gpus', () => {
  it.each([
    // what, level, needs, GPUs
    ['8 ranks on 8 GPUs', 'ok', { nprocPerNode: '8' }, fakeGpus(8)],
    ['4 ranks on 8 GPUs', 'ok', { nprocPerNode: '4' }, fakeGpus(8)],
    ['8 ranks on 4 GPUs', 'refused', { nprocPerNode: '8' }, fakeGpus(4)],
    [
      '8 ranks, CUDA_VISIBLE_DEVICES=0,1,2,3 of 8',
      'refused',
      { nprocPerNode: '8' },
      fakeGpus(8, { cudaVisibleDevices: '0,1,2,3' }),
    ],
    ['8 ranks, no GPU: a CPU job', 'ok', { nprocPerNode: '8' }, fakeGpus(0)],
    [
      '8 ranks, no GPU, though the image asks for all',
      'warning',
      { nprocPerNode: '8' },
      fakeGpus(0, { nvidiaVisibleDevices: 'all' }),
    ],
    [
      '8 ranks, no GPU, NVIDIA_VISIBLE_DEVICES=void',
      'ok',
      { nprocPerNode: '8' },
      fakeGpus(0, { nvidiaVisibleDevices: 'void' }),
    ],
    ['gpu on 4 GPUs', 'ok', { nprocPerNode: 'gpu' }, fakeGpus(4)],
    ['gpu on none: torchrun stops', 'refused', { nprocPerNode: 'gpu' }, fakeGpus(0)],
    ['auto on none: CPUs', 'ok', { nprocPerNode: 'auto' }, fakeGpus(0)],
    ['cpu on 8 GPUs: CPUs', 'ok', { nprocPerNode: 'cpu' }, fakeGpus(8)],
    ['xpu', 'ok', { nprocPerNode: 'xpu', torchVersion: '2.14.1' }, fakeGpus(0)],
  ] as const)('%s: %s', (_, level, needs, gpus) => {
    expect(
      findingOf('gpus', jobNeeds(needs as Partial<ReadinessNeeds>), nodeFacts({ gpus })).level,
    ).toBe(level);
  });

  it('a refusal names the ranks, what CUDA shows and why, and the fix', () => {
    const finding = findingOf(
      'gpus',
      jobNeeds({ nprocPerNode: '8' }),
      nodeFacts({ gpus: fakeGpus(8, { cudaVisibleDevices: '0,1,2,3' }), contexts: ['kubernetes'] }),
    );
    expect(finding).toMatchObject({
      level: 'refused',
      evidence:
        '8 local ranks (--nproc-per-node 8), but CUDA shows 4 GPUs: CUDA_VISIBLE_DEVICES=0,1,2,3 shows 4 of the 8 GPUs here (/proc/driver/nvidia/gpus lists 8, with 8 /dev/nvidiaN); local ranks 4-7 find no GPU of their own ("invalid device ordinal", or NCCL\'s "Duplicate GPU detected") after the rendezvous',
      fix: '--nproc-per-node 4 (or gpu: one rank per visible GPU), or resources.limits: nvidia.com/gpu: 8 in the container',
    });
  });

  it("names torchrun's own error for gpu without GPUs", () => {
    const finding = findingOf(
      'gpus',
      jobNeeds({ nprocPerNode: 'gpu' }),
      nodeFacts({ gpus: fakeGpus(0, { nvidiaVisibleDevices: 'all' }), contexts: ['docker'] }),
    );
    expect(finding.evidence).toBe(
      '--nproc-per-node gpu: torchrun stops with "Cuda is not available." (0 GPUs here (no /proc/driver/nvidia/gpus, no /dev/nvidiaN))',
    );
    expect(finding.fix).toMatch(/^docker run --gpus all/);
  });
});
