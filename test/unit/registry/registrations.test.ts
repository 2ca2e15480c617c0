/**
 * Who has registered with the registry, and who is still missing, through
 * the Registry without sockets: by Slurm name, by rank, and names two
 * nodes share told apart.
 */
import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../../src/probe/protocol.js';
import { TEST_TOKEN as TOKEN } from '../../fixtures/registration.js';
import { decode, membersOf, register, registry } from '../../fixtures/registry.js';

describe('Registry: who registered, who is missing', () => {
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
    // node0's kept NCCL_SOCKET_IFNAME matches a second interface: NCCL's device [1] there.
    const withDevice = () => ({
      ...register(0),
      devices: [['ens3f1', '198.18.1.1', 40_100] as [string, string, number]],
    });
    decode(r.answer(withDevice(), '203.0.113.11'));
    // One line, each member a tuple: name, rank, interface, address, port, speed, port range,
    // MTU, and NCCL's further data-plane devices where the node has any.
    expect(decode(r.answer(register(1), '203.0.113.12'))).toEqual([
      {
        v: PROTOCOL_VERSION,
        kind: 'roster',
        token: TOKEN,
        nodes: 3,
        expected: 3,
        late: false,
        sampled: false,
        members: [
          [
            ...['node0', 0, 'ens3f0', '198.18.0.1', 40_000, 100_000, [32_768, 60_999], 1_500],
            [['ens3f1', '198.18.1.1', 40_100]],
          ],
          ['node1', 1, 'ens3f0', '198.18.0.2', 40_001, 100_000, [32_768, 60_999], 1_500],
          ['node2', 2, 'ens3f0', '198.18.0.3', 40_002, 100_000, [32_768, 60_999], 1_500],
        ],
      },
    ]);
    expect(r.answer(withDevice(), '203.0.113.11')).toEqual(r.answer(register(2), '203.0.113.13'));
    await r.allDelivered;
  });

  it('names missing ranks when there is no node list, and tells names two nodes share apart', () => {
    const r = registry(3);
    expect(decode(r.answer(register(1, 'trainer'), '203.0.113.12'))).toEqual([
      expect.objectContaining({
        kind: 'waiting',
        registered: 1,
        expected: 3,
        missing: ['rank 0', 'rank 2'],
      }),
    ]);
    r.answer(register(0, 'trainer'), '203.0.113.11');
    const members = membersOf(decode(r.answer(register(2, 'other'), '203.0.113.13')));
    expect(members.map((member) => member.name)).toEqual([
      'trainer (rank 0)',
      'trainer (rank 1)',
      'other',
    ]);
  });
});
