import { describe, expect, it } from 'vitest';
import { slurmMasterPort } from '../../../src/cluster/slurm-master-port.js';

describe('slurmMasterPort', () => {
  it('is the same on every node of a job and differs between neighbouring jobs, probe port included', () => {
    const ports = [1000, 1001, 1002].map(slurmMasterPort);
    expect(ports).toEqual([17000, 17002, 17004]);
    expect(new Set(ports.flatMap((p) => [p, p + 1])).size).toBe(6);
  });

  it('stays in 15000-28999 (unprivileged, below the ephemeral range, clear of 29400/29500) for any id', () => {
    for (const id of [1, 6999, 7000, 13_999, 123_456_789, Number.MAX_SAFE_INTEGER]) {
      const port = slurmMasterPort(id);
      expect(port).toBeGreaterThanOrEqual(15_000);
      expect(port + 1).toBeLessThanOrEqual(28_999);
      expect(port % 2).toBe(0);
    }
  });
});
