/**
 * The /dev/shm check as a table over facts: refused only where nothing can
 * go there and several local ranks will want to; too little room a warning
 * with NCCL's numbers and the fix in the user's context.
 */
import { describe, expect, it } from 'vitest';
import type { ShmFacts, UserContext } from '../../../src/readiness/node-readiness.js';
import { fakeGpus, findingOf, GiB, jobNeeds, MiB, nodeFacts } from '../../fixtures/readiness.js';

const shm = (overrides: Partial<ShmFacts>): ShmFacts => ({
  path: '/dev/shm',
  unusable: null,
  sizeBytes: 64 * MiB,
  freeBytes: 64 * MiB,
  blockBytes: 4096,
  tmpfs: true,
  ...overrides,
});
const missing = shm({ unusable: '/dev/shm does not exist', sizeBytes: 0, freeBytes: 0 });

describe('shm', () => {
  it.each([
    // what, /dev/shm, needs, level
    ['room for all of it', shm({ sizeBytes: GiB, freeBytes: GiB }), {}, 'ok'],
    ["Docker's 64 MiB, 8 ranks of a 2-node job", shm({}), {}, 'warning'],
    [
      '64 MiB, 2 ranks on one node (NCCL 2.22: 37 MiB)',
      shm({}),
      { nprocPerNode: '2', nnodes: { min: 1, max: 1 } },
      'ok',
    ],
    [
      '64 MiB, 4 ranks on one node',
      shm({}),
      { nprocPerNode: '4', nnodes: { min: 1, max: 1 } },
      'warning',
    ],
    [
      '64 MiB, 4 ranks, SHM off, one node',
      shm({}),
      { nprocPerNode: '4', nnodes: { min: 1, max: 1 }, ncclEnv: { NCCL_SHM_DISABLE: '1' } },
      'ok',
    ],
    [
      '64 MiB, 2 ranks of a 2-node job on NCCL 2.29 (the pools alone, 65 MiB)',
      shm({}),
      { nprocPerNode: '2', ncclVersion: '2.29.7', ncclEnv: { NCCL_SHM_DISABLE: '1' } },
      'warning',
    ],
    [
      '64 MiB with 60 MiB already taken (stale segments)',
      shm({ freeBytes: 4 * MiB }),
      { nprocPerNode: '2', nnodes: { min: 1, max: 1 } },
      'warning',
    ],
    ['missing, 8 local ranks', missing, {}, 'refused'],
    ['missing, 8 local ranks, SHM off', missing, { ncclEnv: { NCCL_SHM_DISABLE: '1' } }, 'warning'],
    ['missing, 1 local rank', missing, { nprocPerNode: '1' }, 'warning'],
    [
      'read-only',
      shm({ unusable: '/dev/shm cannot be written (EROFS)' }),
      { nprocPerNode: 'gpu' },
      'refused',
    ],
  ] as const)('%s', (_, facts, needs, level) => {
    expect(findingOf('shm', jobNeeds(needs), nodeFacts({ shm: facts })).level).toBe(level);
  });

  it("names what it read, NCCL's estimate with its sources, and Docker's fix", () => {
    const finding = findingOf('shm', jobNeeds(), nodeFacts({ shm: shm({}), contexts: ['docker'] }));
    expect(finding).toEqual({
      check: 'shm',
      ok: false,
      level: 'warning',
      evidence:
        '/dev/shm: 64 MiB tmpfs, 64 MiB free; NCCL 2.22.3 may put up to 351 MiB there for each communicator: the proxy\'s ops pool, 7 MiB per rank × 8 (src/proxy.cc proxyProgressInit); SHM transport buffers where local GPUs have no P2P path, 9.2 MiB per connection × 2 peers × 2 channels × 8 ranks (src/transport/shm.cc); it fails with "failed to extend /dev/shm/nccl-XXXXXX" when that runs out',
      fix: 'docker run --shm-size=1g (or --ipc=host); compose: shm_size: 1gb',
      skipped: false,
    });
  });

  it('says the fix in each context the job runs in', () => {
    const fix = (contexts: UserContext[]) =>
      findingOf('shm', jobNeeds(), nodeFacts({ shm: shm({}), contexts })).fix;
    expect(fix(['kubernetes'])).toBe(
      'mount an emptyDir with medium: Memory (sizeLimit: 1Gi) at /dev/shm in the pod',
    );
    expect(fix(['slurm'])).toMatch(/^\/dev\/shm is the node's: remove your stale/);
    expect(fix([])).toBe(
      'mount -o remount,size=1G /dev/shm (as root), or remove stale /dev/shm/nccl-* files',
    );
    expect(fix(['docker', 'slurm'])).toMatch(
      /^docker run --shm-size=1g .*; \/dev\/shm is the node's/,
    );
  });

  it('a refusal says what is missing and why NCCL needs it', () => {
    const finding = findingOf('shm', jobNeeds(), nodeFacts({ shm: missing, contexts: ['podman'] }));
    expect(finding.evidence).toBe(
      '/dev/shm does not exist: NCCL stats it when a communicator starts (src/init.cc fillInfo) and puts its segments there, as PyTorch does its shared tensors; 8 local ranks (--nproc-per-node 8)',
    );
    expect(finding.fix).toBe('podman run --shm-size=1g (or --ipc=host)');
  });

  it('suggests twice the estimate, in whole GiB', () => {
    const finding = findingOf(
      'shm',
      jobNeeds({ ncclVersion: '2.29.7', nprocPerNode: '8', ncclEnv: { NCCL_MIN_NCHANNELS: '8' } }),
      nodeFacts({ shm: shm({}), contexts: ['docker'] }),
    );
    // 8 pools of 32.6 MiB and 8 × 2 × 8 connections of 9.2 MiB: 1.4 GiB, twice is 2.8: 3g.
    expect(finding.fix).toBe('docker run --shm-size=3g (or --ipc=host); compose: shm_size: 3gb');
  });

  it('no GPU visible: NCCL does not run; only an unusable /dev/shm matters', () => {
    const cpuNode = nodeFacts({ shm: shm({ freeBytes: 0 }), gpus: fakeGpus(0) });
    expect(findingOf('shm', jobNeeds({ nprocPerNode: '4' }), cpuNode)).toMatchObject({
      level: 'ok',
      evidence:
        '/dev/shm: 64 MiB tmpfs, 0 MiB free; no GPU is visible here, so NCCL does not run (0 GPUs here (no /proc/driver/nvidia/gpus, no /dev/nvidiaN))',
    });
  });

  it('an unknown NCCL takes the largest need of the versions nccl-run knows', () => {
    const finding = findingOf('shm', jobNeeds({ ncclVersion: null }), nodeFacts({ shm: shm({}) }));
    expect(finding.evidence).toMatch(
      /NCCL \(version unknown: the largest of every release nccl-run knows\) may put up to 556 MiB/,
    );
  });
});
