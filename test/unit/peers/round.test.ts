/**
 * What the registry waits for, torch's c10d completion rule for an elastic
 * job (dynamic_rendezvous.py, v2.6.0): MAX nodes, or MIN and the last call
 * (30 s unless given); the static backend's world size is always MAX.
 */
import { describe, expect, it } from 'vitest';
import { readJobShape } from '../../../src/job/read-job-shape.js';
import { registryShape } from '../../../src/peers/round.js';
import { elasticC10dArgv as c10d } from '../../fixtures/job-shape.js';

describe('registryShape', () => {
  it('waits for MAX, or MIN after the last call, torch 30 s by default, for an elastic c10d job', () => {
    expect(registryShape(readJobShape(c10d(), {}, null))).toEqual({
      expected: 4,
      minimum: 2,
      lastCallMs: 30_000,
    });
    expect(
      registryShape(readJobShape(c10d('--rdzv-conf', 'last_call_timeout=3'), {}, null)),
    ).toEqual({ expected: 4, minimum: 2, lastCallMs: 3_000 });
  });

  it('waits for every node of a fixed size, and for MAX under the static backend', () => {
    const fixed = ['--rdzv-backend=c10d', '--rdzv-endpoint=node01:29400', '--nnodes=3', 't.py'];
    expect(registryShape(readJobShape(fixed, {}, null))).toEqual({
      expected: 3,
      minimum: 3,
      lastCallMs: null,
    });
    const staticJob = ['--nnodes=2:4', '--node_rank=0', '--master_addr=node01', 't.py'];
    expect(registryShape(readJobShape(staticJob, {}, null))).toEqual({
      expected: 4,
      minimum: 4,
      lastCallMs: null,
    });
  });
});
