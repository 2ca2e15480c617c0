/**
 * --peers matched against the registrations as nodes come, through the
 * Registry without sockets: by short name, then an address the node holds,
 * then the one it came from; a name claims what an address found first;
 * 4,096 entries matched as they come.
 */
import { describe, expect, it } from 'vitest';
import { rosterMembers } from '../../../src/probe/protocol.js';
import { Registry } from '../../../src/registry/registry.js';
import { TEST_TOKEN as TOKEN } from '../../fixtures/registration.js';
import { decode, membersOf, register } from '../../fixtures/registry.js';

describe('Registry: --peers matched as nodes register', () => {
  it('matches --peers by short name, then by an address the node holds, then by the one it came from, and names the rest in list order', () => {
    const r = new Registry({
      round: 'register',
      token: TOKEN,
      expected: 64,
      nodeList: [],
      restrict: [
        { name: 'node1.cluster', addresses: [] },
        { name: '198.18.0.3', addresses: ['198.18.0.3'] },
        { name: 'mgmt4', addresses: ['203.0.113.14'] },
        { name: 'node9', addresses: [] },
      ],
    });
    const waiting = (answer: Buffer) => {
      const [message] = decode(answer);
      return message?.kind === 'waiting' && [message.registered, message.expected, message.missing];
    };
    const names = (answer: Buffer) =>
      decode(answer).flatMap((message) =>
        message.kind === 'roster'
          ? [`roster ${message.members.length}`, ...rosterMembers(message).map((m) => m.name)]
          : [message.kind],
      );
    const once = [1, 4, ['198.18.0.3', 'mgmt4', 'node9']];
    expect(waiting(r.answer(register(null, 'node1', '198.18.0.1'), '203.0.113.11'))).toEqual(once);
    // Asking again is the same node; one --peers leaves out waits, and is no member.
    expect(waiting(r.answer(register(null, 'node1', '198.18.0.1'), '203.0.113.11'))).toEqual(once);
    expect(waiting(r.answer(register(null, 'stranger', '198.18.9.9'), '203.0.113.99'))).toEqual(
      once,
    );
    expect(waiting(r.answer(register(null, 'gpu-x', '198.18.0.3'), '203.0.113.13'))).toEqual([
      2,
      4,
      ['mgmt4', 'node9'],
    ]);
    expect(waiting(r.answer(register(null, 'n4', '198.18.0.4'), '203.0.113.14'))).toEqual([
      3,
      4,
      ['node9'],
    ]);
    // A second node1, from elsewhere: its entry is taken.
    expect(waiting(r.answer(register(null, 'node1', '198.18.0.21'), '203.0.113.21'))).toEqual([
      3,
      4,
      ['node9'],
    ]);
    expect(names(r.answer(register(null, 'node9.cluster', '198.18.0.9'), '203.0.113.19'))).toEqual([
      'roster 4',
      'gpu-x',
      'n4',
      'node1',
      'node9.cluster',
    ]);
    // Those --peers leaves out get an empty roster; a listed node after the roster is complete, a refusal.
    expect(names(r.answer(register(null, 'stranger', '198.18.9.9'), '203.0.113.99'))).toEqual([
      'roster 0',
    ]);
    expect(names(r.answer(register(null, 'node1', '198.18.0.21'), '203.0.113.21'))).toEqual([
      'roster 0',
    ]);
    expect(names(r.answer(register(null, 'late', '198.18.9.10'), '203.0.113.98'))).toEqual([
      'roster 0',
    ]);
    expect(decode(r.answer(register(null, 'node9', '198.18.0.29'), '203.0.113.29'))).toEqual([
      expect.objectContaining({ kind: 'roster', nodes: 4, late: true, members: [] }),
    ]);
  });

  it('gives a --peers entry to the node of its name, though another node found it by address first', () => {
    const r = new Registry({
      round: 'register',
      token: TOKEN,
      expected: 64,
      nodeList: [],
      restrict: [
        { name: 'node1', addresses: ['198.18.0.7'] },
        { name: 'spare', addresses: ['198.18.0.7'] },
      ],
    });
    const [first] = decode(r.answer(register(null, 'x', '198.18.0.7'), '203.0.113.17'));
    expect(first).toMatchObject({ kind: 'waiting', registered: 1, missing: ['spare'] });
    const members = membersOf(
      decode(r.answer(register(null, 'node1', '198.18.0.1'), '203.0.113.11')),
    );
    expect(members.map((member) => member.name)).toEqual(['node1', 'x']);
  });

  it('matches 4,096 registrations against as many --peers entries as they come, each once', () => {
    const nodes = 4_096;
    const address = (rank: number) => `198.18.${Math.floor(rank / 250)}.${(rank % 250) + 1}`;
    const r = new Registry({
      round: 'register',
      token: TOKEN,
      expected: nodes,
      nodeList: [],
      // Half by name, half by address, in an order of their own.
      restrict: Array.from({ length: nodes }, (_, i) => {
        const rank = (i * 2_654_435_761) % nodes;
        return rank % 2 === 0
          ? { name: `node${rank}.cluster`, addresses: [] }
          : { name: address(rank), addresses: [address(rank)] };
      }),
    });
    let last = r.answer(register(0), '203.0.0.0');
    for (let rank = 1; rank < nodes; rank += 1)
      last = r.answer(register(rank), `203.0.${rank >> 8}.${rank & 255}`);
    // Each registration re-counts and re-lists who is missing: matching afresh each time took
    // hours at this size (0.3 s now, the bench's to measure); the test's own timeout is its bound.
    expect(decode(last)[0]).toMatchObject({ kind: 'roster', nodes, sampled: true });
  });
});
