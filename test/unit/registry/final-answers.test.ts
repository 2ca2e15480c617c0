/**
 * The registry's final answers, through the Registry without sockets: at
 * 4,096 nodes each roster is the node's ring neighbours plus a sample, the
 * relation symmetric, and the host's own node, then its partners, get
 * theirs first, a batch per turn.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ROSTER_MEMBERS, type Member } from '../../../src/probe/protocol.js';
import { decode, membersOf, register, registry } from '../../fixtures/registry.js';

describe('Registry: the final answers', () => {
  it('holds 4,096 registrations and gives each node its ring neighbours plus a sample, the relation symmetric', () => {
    const nodes = 4_096;
    const r = registry(nodes);
    for (let rank = 0; rank < nodes; rank += 1)
      r.answer(register(rank), `203.0.${rank >> 8}.${rank & 255}`);
    const answers = Array.from({ length: nodes }, (_, rank) =>
      r.answer(register(rank), `203.0.${rank >> 8}.${rank & 255}`),
    );
    const rosters = answers.map(decode);
    const partnerRanks = rosters.map(
      (lines, rank) =>
        new Set(
          membersOf(lines).flatMap((member) =>
            member.rank !== rank ? [member.rank as number] : [],
          ),
        ),
    );
    expect(rosters[0]).toEqual([expect.objectContaining({ kind: 'roster', nodes, sampled: true })]);
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
    // A roster is its partners and itself: far inside the bound the protocol holds it to (89 at most over 16 seeds).
    expect(Math.max(...degrees) + 1).toBeLessThan(MAX_ROSTER_MEMBERS / 2);
    // 1 ring neighbour and 31 draws of its own, as many of others' on average.
    expect(Math.min(...degrees)).toBeGreaterThanOrEqual(32);
    expect(degrees.reduce((sum, degree) => sum + degree, 0) / nodes).toBeCloseTo(64, -1);
  });

  it("gives the registry host's own node its roster first, then its partners', then everyone else's, a batch per turn", async () => {
    const nodes = 4_096;
    const r = registry(nodes);
    const order: number[] = [];
    const held = (rank: number) => ({
      update: () => {},
      finish: () => order.push(rank),
      onGone: () => {},
    });
    // The host joins first, in-process, as peers/peers.ts has it; the last node completes the roster.
    let own: Member[] = [];
    r.serve(register(0), '203.0.0.0', {
      update: () => {},
      finish: (bytes) => {
        order.push(0);
        own = membersOf(decode(bytes));
      },
      onGone: () => {},
      local: true,
    });
    const last = nodes - 1;
    for (let rank = 1; rank <= last; rank += 1)
      r.serve(register(rank), `203.0.${rank >> 8}.${rank & 255}`, held(rank));
    // One batch of 256 held nodes at once (the host's first), then the last node's own answer.
    expect(order).toHaveLength(256 + 1);
    expect(order[0]).toBe(0);
    expect(order.at(-1)).toBe(last);
    const partners = own.flatMap((member) =>
      member.rank === 0 || member.rank === last ? [] : [member.rank as number],
    );
    expect(new Set(order.slice(1, 1 + partners.length))).toEqual(new Set(partners));
    await r.allDelivered;
    expect(new Set(order).size).toBe(nodes);
  });
});
