/** A sampled roster's partners (registry/partners.ts): fixed by the job's seed. */
import { describe, expect, it } from 'vitest';
import { FULL_MESH_MAX_NODES, sampledPartners } from '../../../src/registry/partners.js';

describe('sampledPartners', () => {
  it('is the same for the same seed and differs for another', () => {
    const nodes = FULL_MESH_MAX_NODES + 1;
    expect(sampledPartners(nodes, 7)).toEqual(sampledPartners(nodes, 7));
    expect(sampledPartners(nodes, 7)).not.toEqual(sampledPartners(nodes, 8));
  });
});
