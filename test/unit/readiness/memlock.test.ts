/**
 * The locked-memory check as a table: refused under --require-transport ib
 * below one LL buffer (the default 64 KiB of older kernels and of Docker's
 * daemon under systemd), a warning below a rank's estimate (8 MiB without
 * GPUDirect RDMA), passed with CAP_IPC_LOCK or off RDMA.
 */
import { describe, expect, it } from 'vitest';
import type { NodeReadiness } from '../../../src/readiness/node-readiness.js';
import { findingOf, jobNeeds, MiB, nodeFacts } from '../../fixtures/readiness.js';

const limit = (soft: number | 'unlimited', hard: number | 'unlimited' = soft) => ({ soft, hard });

describe('memlock', () => {
  it.each([
    // what, level, node, needs
    ['unlimited', 'ok', {}, {}],
    [
      '64 KiB, IB, --require-transport ib',
      'refused',
      { memlock: limit(64 * 1024) },
      { requireTransport: 'ib' },
    ],
    ['64 KiB, IB', 'warning', { memlock: limit(64 * 1024) }, {}],
    ['64 KiB, RoCE', 'warning', { memlock: limit(64 * 1024) }, { transport: 'roce' }],
    ['64 KiB, sockets', 'ok', { memlock: limit(64 * 1024) }, { transport: 'socket' }],
    [
      '64 KiB, sockets, --require-transport ib',
      'refused',
      { memlock: limit(64 * 1024) },
      { transport: 'socket', requireTransport: 'ib' },
    ],
    ['64 KiB, one node', 'ok', { memlock: limit(64 * 1024) }, { nnodes: { min: 1, max: 1 } }],
    [
      '64 KiB with CAP_IPC_LOCK',
      'ok',
      { memlock: limit(64 * 1024), ipcLock: true },
      { requireTransport: 'ib' },
    ],
    [
      '8 MiB, GPUDirect RDMA (1 MiB registered)',
      'ok',
      { memlock: limit(8 * MiB) },
      { requireTransport: 'ib' },
    ],
    [
      '8 MiB, no GPUDirect (37 MiB registered)',
      'warning',
      { memlock: limit(8 * MiB), gpuDirect: false },
      { requireTransport: 'ib' },
    ],
    [
      '8 MiB, no GPUDirect, 1 MiB NCCL_BUFFSIZE and no LL128',
      'ok',
      { memlock: limit(8 * MiB), gpuDirect: false },
      { ncclEnv: { NCCL_BUFFSIZE: '1048576', NCCL_LL128_BUFFSIZE: '0' } },
    ],
    ['unreadable', 'ok', { memlock: null }, { requireTransport: 'ib' }],
  ] as const)('%s: %s', (_, level, node, needs) => {
    expect(
      findingOf('memlock', jobNeeds(needs), nodeFacts(node as Partial<NodeReadiness>)).level,
    ).toBe(level);
  });

  it('a refusal names the limit, what NCCL registers and the fix for Docker', () => {
    const finding = findingOf(
      'memlock',
      jobNeeds({ requireTransport: 'ib' }),
      nodeFacts({ memlock: limit(65536), contexts: ['docker'] }),
    );
    expect(finding).toMatchObject({
      level: 'refused',
      evidence:
        'locked-memory limit 64 KiB per process (ulimit -l; hard 64 KiB), no CAP_IPC_LOCK; NCCL registers at least one 0.5 MiB LL buffer in host memory for each network connection (src/transport/net.cc), so its IB transport fails at the first ("unable to register memory"), and --require-transport ib keeps it from falling back to sockets',
      fix: 'docker run --ulimit memlock=-1:-1; compose: ulimits: { memlock: -1 }',
    });
  });

  it('a warning gives the estimate and how it was made', () => {
    const finding = findingOf(
      'memlock',
      jobNeeds(),
      nodeFacts({ memlock: limit(8 * MiB), gpuDirect: false, contexts: ['slurm'] }),
    );
    expect(finding.evidence).toBe(
      'locked-memory limit 8 MiB per process (ulimit -l; hard 8 MiB), no CAP_IPC_LOCK; NCCL registers about 37 MiB of host memory per rank: 9.2 MiB of buffers per connection and side (no GPUDirect RDMA seen: nvidia_peermem is not loaded, though DMA-BUF may give it), for 2 channels (src/transport/net.cc)',
    );
    expect(finding.fix).toMatch(
      /PropagateResourceLimits.*srun --propagate=NONE.*PropagateResourceLimitsExcept=MEMLOCK/,
    );
  });

  it('says Kubernetes has no pod field for it', () => {
    const finding = findingOf(
      'memlock',
      jobNeeds(),
      nodeFacts({ memlock: limit(65536), contexts: ['kubernetes'] }),
    );
    expect(finding.fix).toMatch(/LimitMEMLOCK=infinity in containerd's .*"IPC_LOCK"/);
  });
});
