import { describe, expect, it } from 'vitest';
import { detectCluster } from '../../../src/cluster/schedulers.js';
import { operatorEnv, SBATCH } from '../../fixtures/cluster-env.js';

describe('detectCluster: none', () => {
  it('ignores every variable', () => {
    expect(detectCluster('none', { ...SBATCH, ...operatorEnv(1) })).toBeNull();
  });

  it('auto with nothing set is no cluster', () => {
    expect(detectCluster('auto', {})).toBeNull();
  });
});
