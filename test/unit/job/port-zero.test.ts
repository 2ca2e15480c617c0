/**
 * A rendezvous at a port torch picks (src/job/port-zero.ts): this host's
 * alone; more than one node, or an endpoint elsewhere, cannot work.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, UsageError } from '../../../src/errors.js';
import { picksPort, portZeroElsewhere, portZeroWithNodes } from '../../../src/job/port-zero.js';
import { endpointOrigins, makeJob, originNamed } from '../../fixtures/job-shape.js';

const c10d = (host: string, port: number, nodes: [number, number], from = '--rdzv-endpoint') =>
  makeJob({
    rdzvBackend: 'c10d',
    master: { host, port, ...endpointOrigins(from) },
    nnodes: { min: nodes[0], max: nodes[1], origin: originNamed('--nnodes') },
    nodeRank: null,
  });

describe('port 0', () => {
  it('is a port torch picks only at port 0', () => {
    expect(picksPort(c10d('localhost', 0, [1, 1]))).toBe(true);
    expect(picksPort(c10d('localhost', 29400, [1, 1]))).toBe(false);
    expect(picksPort(makeJob({ master: null }))).toBe(false);
  });

  it('cannot serve nodes that would have to learn it: 64 from argv, 78 from a variable', () => {
    expect(portZeroWithNodes(c10d('localhost', 0, [1, 1]))).toBeNull();
    expect(portZeroWithNodes(c10d('localhost', 0, [2, 2]))).toBeInstanceOf(UsageError);
    const elastic = portZeroWithNodes(c10d('localhost', 0, [1, 4], 'PET_RDZV_ENDPOINT'));
    expect(elastic).toBeInstanceOf(ConfigError);
    expect(elastic?.message).toMatch(/the job has up to 4 nodes \(--nnodes\)/);
  });

  it('is this host or nothing', () => {
    expect(portZeroElsewhere(c10d('localhost', 0, [1, 1]), true)).toBeNull();
    expect(portZeroElsewhere(c10d('node01', 0, [1, 1]), false)?.message).toBe(
      "torchrun argument --rdzv-endpoint: bad value 'node01:0': port 0 is a port torch picks on the node that hosts the store, and node01 is not this host, whose agent would dial port 0 there; use localhost:0 on the one node, or a fixed port",
    );
    expect(portZeroElsewhere(c10d('node01', 29400, [1, 1]), false)).toBeNull();
  });
});
