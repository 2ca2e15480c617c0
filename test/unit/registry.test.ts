/**
 * The master's registry without sockets: what it answers each node, from
 * the first registration to the last, at 3 nodes and at 4,096 (a roster of
 * ring neighbours plus a sample there).
 */
import { describe, expect, it } from 'vitest';
import { FULL_MESH_MAX_NODES, sampledPartners } from '../../src/verify/mesh-partners.js';
import {
  MessageReader,
  type ProbeMessage,
  type Register,
} from '../../src/verify/probe-protocol.js';
import { Registry } from '../../src/verify/registry.js';

const TOKEN = '0123456789abcdef0123456789abcdef';

function register(
  rank: number | null,
  name = `node${rank}`,
  address = `198.18.${Math.floor((rank ?? 0) / 250)}.${((rank ?? 0) % 250) + 1}`,
): Register {
  return {
    v: 2,
    kind: 'register',
    token: TOKEN,
    node: { name, rank },
    interface: 'ens3f0',
    address,
    port: 40_000 + ((rank ?? 0) % 20_000),
    speedMbps: 100_000,
    portRange: [32_768, 60_999],
  };
}

function decode(answer: Buffer): ProbeMessage[] {
  return new MessageReader().push(answer).map((outcome) => {
    if (outcome.kind === 'invalid') throw new Error(outcome.reason);
    return outcome.message;
  });
}

const registry = (expected: number, nodeList: string[] = [], restrict = null) =>
  new Registry({ round: 'register', token: TOKEN, expected, nodeList, restrict });

describe('Registry', () => {
  it('says who is missing by Slurm name until all have come, then gives everyone the same roster, in rank order', async () => {
    const r = registry(3, ['gpu-a', 'gpu-b', 'gpu-c']);
    expect(decode(r.answer(register(2), '203.0.113.13'))).toEqual([
      expect.objectContaining({
        kind: 'waiting',
        round: 'register',
        registered: 1,
        expected: 3,
        missing: ['gpu-a', 'gpu-b'],
        retryMs: 100,
      }),
    ]);
    // Asking again changes nothing.
    expect(decode(r.answer(register(2), '203.0.113.13'))).toEqual([
      expect.objectContaining({ registered: 1 }),
    ]);
    decode(r.answer(register(0), '203.0.113.11'));
    const [header, ...members] = decode(r.answer(register(1), '203.0.113.12'));
    expect(header).toEqual({
      v: 2,
      kind: 'roster',
      token: TOKEN,
      nodes: 3,
      sampled: false,
      members: 3,
    });
    expect(
      members.map((member) => member.kind === 'member' && [member.name, member.address]),
    ).toEqual([
      ['node0', '198.18.0.1'],
      ['node1', '198.18.0.2'],
      ['node2', '198.18.0.3'],
    ]);
    expect(r.answer(register(0), '203.0.113.11')).toEqual(r.answer(register(2), '203.0.113.13'));
    await r.allDelivered;
  });

  it('names missing ranks when there is no node list, and tells names two nodes share apart', () => {
    const r = registry(3);
    r.answer(register(1, 'trainer'), '203.0.113.12');
    expect(r.status()).toEqual({
      registered: 1,
      expected: 3,
      missing: ['rank 0', 'rank 2'],
      more: 0,
    });
    r.answer(register(0, 'trainer'), '203.0.113.11');
    const [, ...members] = decode(r.answer(register(2, 'other'), '203.0.113.13'));
    expect(members.map((member) => member.kind === 'member' && member.name)).toEqual([
      'trainer (rank 0)',
      'trainer (rank 1)',
      'other',
    ]);
  });

  it('refuses a rank outside the job, a rank claimed by a second node, and a node after the roster is complete', () => {
    const r = registry(2);
    expect(decode(r.answer(register(5), '203.0.113.15'))).toEqual([
      expect.objectContaining({
        kind: 'reject',
        reason: "rank 5 is outside the job's 2 nodes (ranks 0-1)",
      }),
    ]);
    r.answer(register(0), '203.0.113.11');
    expect(decode(r.answer(register(0, 'node9'), '203.0.113.19'))).toEqual([
      expect.objectContaining({
        kind: 'reject',
        reason:
          'rank 0 is registered already, by node0 from 203.0.113.11 (198.18.0.1): two nodes claim it',
      }),
    ]);
    r.answer(register(1), '203.0.113.12');
    expect(decode(r.answer(register(null, 'late'), '203.0.113.20'))).toEqual([
      expect.objectContaining({
        kind: 'reject',
        reason: 'all 2 nodes had registered before late 203.0.113.20: it is not part of this check',
      }),
    ]);
  });

  it('tells a node of the other round to ask again', () => {
    const r = new Registry({
      round: 'publish',
      token: TOKEN,
      expected: 2,
      nodeList: [],
      restrict: null,
    });
    expect(decode(r.answer(register(0), '203.0.113.11'))).toEqual([
      expect.objectContaining({ kind: 'waiting', round: 'publish', registered: 0 }),
    ]);
  });

  it('holds 4,096 registrations and gives each node its ring neighbours plus a sample, the relation symmetric', () => {
    const nodes = 4_096;
    const r = registry(nodes);
    const started = performance.now();
    for (let rank = 0; rank < nodes; rank += 1)
      r.answer(register(rank), `203.0.${rank >> 8}.${rank & 255}`);
    const answers = Array.from({ length: nodes }, (_, rank) =>
      r.answer(register(rank), `203.0.${rank >> 8}.${rank & 255}`),
    );
    const elapsed = performance.now() - started;
    // Plain JSON.parse: 266,000 lines through the strict reader would be most of this test's time.
    const rosters = answers.map(
      (answer) =>
        answer
          .toString()
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line)) as ProbeMessage[],
    );
    const partnerRanks = rosters.map(
      (lines, rank) =>
        new Set(
          lines.flatMap((line) =>
            line.kind === 'member' && line.rank !== rank ? [line.rank as number] : [],
          ),
        ),
    );
    expect(rosters[0]?.[0]).toMatchObject({ kind: 'roster', nodes, sampled: true });
    const broken = partnerRanks.flatMap((partners, rank) => [
      ...(partners.has((rank + 1) % nodes) && partners.has((rank + nodes - 1) % nodes)
        ? []
        : [`${rank}: a ring neighbour missing`]),
      ...[...partners]
        .filter((partner) => !partnerRanks[partner]?.has(rank))
        .map((p) => `${rank}-${p} one way`),
    ]);
    expect(broken).toEqual([]);
    const degrees = partnerRanks.map((partners) => partners.size);
    // 1 ring neighbour and 31 draws of its own, as many of others' on average.
    expect(Math.min(...degrees)).toBeGreaterThanOrEqual(32);
    expect(degrees.reduce((sum, degree) => sum + degree, 0) / nodes).toBeCloseTo(64, -1);
    // Every registration and every roster, answered in one process.
    expect(elapsed).toBeLessThan(2_000);
  });
});

describe('sampledPartners', () => {
  it('is the same for the same seed and differs for another', () => {
    const nodes = FULL_MESH_MAX_NODES + 1;
    expect(sampledPartners(nodes, 7)).toEqual(sampledPartners(nodes, 7));
    expect(sampledPartners(nodes, 7)).not.toEqual(sampledPartners(nodes, 8));
  });
});
