/**
 * The data plane in the launch summary's words (src/transport/transport-text.ts),
 * over RDMA host snapshots (test/fixtures/rdma).
 */
import { describe, expect, it } from 'vitest';
import { assessTransport } from '../../../src/transport/assess-transport.js';
import { dataPlaneSummary } from '../../../src/transport/transport-text.js';
import { NO_PLUGIN } from '../../fixtures/rdma/net-plugin-search.js';
import { loadRdmaFacts, type RdmaFixture } from '../../fixtures/rdma/rdma-fixtures.js';

function assess(fixture: RdmaFixture | null, ncclEnv: Record<string, string> = {}) {
  return assessTransport({
    rdma: fixture === null ? undefined : loadRdmaFacts(fixture).rdma,
    ncclEnv,
    required: null,
    requiredBy: { name: '--require-transport', from: 'flag' },
    netPlugin: NO_PLUGIN,
    facts: { interfaces: [] },
    originOf: (name) => ({ name, from: 'env' }),
  });
}

const TWELVE = Array.from({ length: 12 }, (_, n) => `mlx5_${n}:1`);

describe('the launch summary', () => {
  it.each([
    ['ib-container', 'data plane: sockets (no /dev/infiniband in this container)'],
    ['roce-node', 'data plane: RoCE (mlx5_0:1 GID 3, mlx5_1:1 GID 3, mlx5_2:1 GID 0)'],
    ['ib-dgx', `data plane: IB (${TWELVE.filter((port) => port !== 'mlx5_5:1').join(', ')})`],
  ] as const)('%s: %s', (fixture, summary) => {
    expect(dataPlaneSummary(assess(fixture))).toBe(summary);
  });

  it('says none when NCCL will fail rather than fall back', () => {
    expect(dataPlaneSummary(assess('ib-container', { NCCL_NET: 'IB' }))).toBe(
      'data plane: none (no /dev/infiniband in this container; NCCL_NET=IB makes NCCL fail instead of falling back to sockets)',
    );
  });

  it('says nothing of the data plane on a host without RDMA devices', () => {
    expect(dataPlaneSummary(assess(null))).toBeNull();
  });
});
