/**
 * A static job's node rank torch cannot place (src/job/node-rank-range.ts):
 * refused, 64 from argv and 78 from a variable; an elastic job's rank is the
 * rendezvous's to give.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, UsageError } from '../../../src/errors.js';
import { nodeRankBeyondNodes } from '../../../src/job/node-rank-range.js';
import { makeJob, originNamed } from '../../fixtures/job-shape.js';

const job = (rank: number, nodes: number, from = '--node_rank', backend = 'static') =>
  makeJob({
    rdzvBackend: backend,
    nnodes: { min: nodes, max: nodes, origin: originNamed('--nnodes') },
    nodeRank: { value: rank, origin: originNamed(from) },
  });

describe('a static node rank beyond the nodes', () => {
  it('is refused at --nnodes or more, with the ranks that would do', () => {
    expect(nodeRankBeyondNodes(job(0, 2))).toBeNull();
    expect(nodeRankBeyondNodes(job(1, 2))).toBeNull();
    const refused = nodeRankBeyondNodes(job(2, 2));
    expect(refused).toBeInstanceOf(UsageError);
    expect(refused?.message).toBe(
      "torchrun argument --node_rank: bad value '2': the nodes of a static job of 2 (--nnodes) are ranked 0 to 1, and torch would wait for node 2 to join until its store times out; give this node a rank below 2, or the job more nodes",
    );
  });

  it('is 78 where a variable gave it', () => {
    expect(nodeRankBeyondNodes(job(4, 4, 'PET_NODE_RANK'))).toBeInstanceOf(ConfigError);
  });

  it('is no matter for an elastic rendezvous, which ranks the nodes itself', () => {
    expect(nodeRankBeyondNodes(job(5, 2, '--node_rank', 'c10d'))).toBeNull();
    expect(nodeRankBeyondNodes(makeJob({ rdzvBackend: 'c10d', nodeRank: null }))).toBeNull();
  });
});
