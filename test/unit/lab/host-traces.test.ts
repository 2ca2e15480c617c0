import { describe, expect, it } from 'vitest';
import { tmpLeft, tracesLeft } from '../../lab/host-traces.js';

describe('tracesLeft', () => {
  it('names a watched path that appeared during the run', () => {
    expect(tracesLeft(new Set(), (path) => path === '/dev/infiniband')).toEqual([
      '/dev/infiniband',
    ]);
  });

  it('leaves alone one that was there before (a real RDMA host)', () => {
    expect(tracesLeft(new Set(['/dev/infiniband']), () => true)).toEqual([]);
  });

  it('finds nothing where nothing appeared', () => {
    expect(tracesLeft(new Set(), () => false)).toEqual([]);
  });
});

describe('tmpLeft', () => {
  it("names the temporary folder's new entries of the suite's prefixes: its tests' folders and torchrun's log folders", () => {
    expect(
      tmpLeft(new Set(), [
        'nccl-run-config-AbC123',
        'ncr-check-on-node-x1Y2z3',
        'torchelastic_06mm2miy',
      ]),
    ).toEqual(['nccl-run-config-AbC123', 'ncr-check-on-node-x1Y2z3', 'torchelastic_06mm2miy']);
  });

  it('leaves alone what was there before it ran', () => {
    expect(tmpLeft(new Set(['ncr-slurm-Q9w8e7']), ['ncr-slurm-Q9w8e7'])).toEqual([]);
    expect(
      tmpLeft(new Set(['torchelastic_old']), ['torchelastic_old', 'torchelastic_new']),
    ).toEqual(['torchelastic_new']);
  });

  it("leaves alone what is not the suite's: nccl-run's hand-over files, tools' caches, other folders", () => {
    expect(
      tmpLeft(new Set(), [
        'nccl-run.Xy12Ab',
        'tsx-0',
        'nccl-run',
        'ncr',
        'torchelastic',
        'gpu-rehearsal-abc',
        'build.log',
      ]),
    ).toEqual([]);
  });
});
