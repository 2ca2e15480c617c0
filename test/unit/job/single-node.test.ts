import { describe, expect, it } from 'vitest';
import type { JobShape } from '../../../src/job/job-shape.js';
import { isSingleNode } from '../../../src/job/single-node.js';
import { loadFacts } from '../../fixtures/facts/facts-fixtures.js';
import { makeJob as job, originNamed } from '../../fixtures/job-shape.js';

describe('isSingleNode (SPEC `local`)', () => {
  const master = loadFacts('master-node');
  const nnodes = (min: number, max: number) => ({ min, max, origin: originNamed('--nnodes') });
  it.each<[string, Partial<JobShape>, string[], boolean]>([
    ['torchrun defaults: one node, master 127.0.0.1', {}, ['127.0.0.1'], true],
    [
      '--standalone, whatever else',
      { standalone: true, master: null, nnodes: nnodes(2, 2) },
      [],
      true,
    ],
    ['one node, no master at all', { master: null }, [], true],
    ['one node, master ::1', {}, ['::1'], true],
    // Debian's /etc/hosts maps the hostname to 127.0.1.1: still this host.
    ['one node, hostname on 127.0.1.1', {}, ['127.0.1.1'], true],
    ["one node, master is this host's own address", {}, ['198.18.60.10'], true],
    ['one node, own IPv6 address spelt long', {}, ['2001:db8:60:0:0:0:0:10'], true],
    // torch runs these as this host: its store binds every address, its clients connect locally.
    ['one node, master the unspecified 0.0.0.0', {}, ['0.0.0.0'], true],
    ['one node, master the unspecified ::, spelt long', {}, ['0:0:0:0:0:0:0:0'], true],
    ['two nodes, master 0.0.0.0: not one node', { nnodes: nnodes(2, 2) }, ['0.0.0.0'], false],
    ['one node, master another host', {}, ['198.18.60.11'], false],
    [
      'one node, a name resolving to this host and another',
      {},
      ['198.18.60.10', '198.18.60.11'],
      false,
    ],
    ['two nodes, master here', { nnodes: nnodes(2, 2) }, ['198.18.60.10'], false],
    ['elastic 1:2, a peer may join', { nnodes: nnodes(1, 2) }, ['127.0.0.1'], false],
  ])('%s → %s', (_, shape, addresses, expected) => {
    expect(isSingleNode(job(shape), addresses, master)).toBe(expected);
  });
});
