/**
 * The data-plane verdict over RDMA host snapshots (test/fixtures/rdma), as
 * NCCL 2.22 decides it (src/transport/net_ib.cc ncclIbInit, src/net.cc
 * ncclNetInit): which ports its IB transport takes, the GID each uses, and
 * sockets otherwise, with the reason.
 */
import { describe, expect, it } from 'vitest';
import { assessTransport } from '../../../src/transport/assess-transport.js';
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

const used = (transport: ReturnType<typeof assess>) =>
  transport.verdict.devices.filter((port) => port.used).map((port) => `${port.name}:${port.port}`);

const TWELVE = Array.from({ length: 12 }, (_, n) => `mlx5_${n}:1`);

describe('transportVerdict', () => {
  it.each([
    ['ib-dgx', {}, 'ib', TWELVE.filter((port) => port !== 'mlx5_5:1')],
    ['ib-dgx', { NCCL_NET: 'ib' }, 'ib', TWELVE.filter((port) => port !== 'mlx5_5:1')],
    [
      'ib-dgx',
      { NCCL_IB_HCA: 'mlx5_0,mlx5_1' },
      'ib',
      ['mlx5_0:1', 'mlx5_1:1', 'mlx5_10:1', 'mlx5_11:1'],
    ],
    ['ib-dgx', { NCCL_IB_HCA: '=mlx5_0,mlx5_1' }, 'ib', ['mlx5_0:1', 'mlx5_1:1']],
    ['ib-dgx', { NCCL_IB_HCA: 'mlx5_0:1,mlx5_2:1' }, 'ib', ['mlx5_0:1', 'mlx5_2:1']],
    [
      'ib-dgx',
      { NCCL_IB_HCA: '^mlx5_1' },
      'ib',
      [
        'mlx5_0:1',
        'mlx5_2:1',
        'mlx5_3:1',
        'mlx5_4:1',
        'mlx5_6:1',
        'mlx5_7:1',
        'mlx5_8:1',
        'mlx5_9:1',
      ],
    ],
    ['ib-dgx', { NCCL_IB_HCA: 'mlx5_5' }, 'socket', []],
    ['ib-dgx', { NCCL_IB_DISABLE: '1' }, 'socket', []],
    ['ib-dgx', { NCCL_IB_DISABLE: '0' }, 'ib', TWELVE.filter((port) => port !== 'mlx5_5:1')],
    ['ib-dgx', { NCCL_NET: 'Socket' }, 'socket', []],
    ['ib-container', {}, 'socket', []],
    ['roce-node', {}, 'roce', ['mlx5_0:1', 'mlx5_1:1', 'mlx5_2:1']],
    ['efa-node', {}, 'socket', []],
  ] as const)('%s with %j: %s on %j', (fixture, env, kind, ports) => {
    const transport = assess(fixture, env);
    expect(transport.verdict.kind).toBe(kind);
    expect(used(transport)).toEqual(ports);
  });

  it.each([
    ['ib-container', {}, 'no /dev/infiniband in this container'],
    [
      'efa-node',
      {},
      "4 EFA device(s) (rdmap16s27, rdmap32s27, rdmap48s27, rdmap64s27), but no net plugin (no libnccl-net.so where the loader looks): NCCL runs on sockets at a fraction of the fabric's speed",
    ],
    ['ib-dgx', { NCCL_IB_HCA: 'mlx5_5' }, 'no port NCCL can use:'],
    ['ib-dgx', { NCCL_IB_DISABLE: '1' }, "NCCL_IB_DISABLE=1 turns NCCL's IB transport off"],
    ['ib-dgx', { NCCL_NET: 'Socket' }, "NCCL_NET=Socket leaves NCCL's IB transport out"],
    [null, {}, 'no RDMA devices in /sys/class/infiniband'],
  ] as const)('%s with %j says why: %s', (fixture, env, reason) => {
    expect(assess(fixture, env).verdict.reason).toContain(reason);
  });

  it('says when NCCL_NET=IB makes NCCL fail instead of falling back', () => {
    expect(assess('ib-container', { NCCL_NET: 'IB' }).verdict).toMatchObject({
      kind: 'socket',
      reason: 'no /dev/infiniband in this container',
      ncclFails: true,
    });
    expect(assess('ib-container').verdict.ncclFails).toBe(false);
    expect(assess('ib-dgx', { NCCL_NET: 'IB' }).verdict.ncclFails).toBe(false);
  });

  it('names why each port is skipped, in the order NCCL checks', () => {
    const skipped = (fixture: RdmaFixture, env: Record<string, string>) =>
      Object.fromEntries(
        assess(fixture, env)
          .verdict.devices.filter((port) => !port.used)
          .map((port) => [`${port.name}:${port.port}`, port.skipped]),
      );
    expect(skipped('ib-dgx', { NCCL_IB_HCA: '=mlx5_0,mlx5_5' })).toMatchObject({
      'mlx5_5:1': 'port DOWN',
      'mlx5_1:1': 'not selected by NCCL_IB_HCA==mlx5_0,mlx5_5',
    });
    expect(skipped('ib-container', {})['mlx5_0:1']).toBe('no /dev/infiniband/uverbs0');
  });

  it.each([
    // fe80 v1, fe80 v2, IPv4 v1, IPv4 v2, IPv6 v1, IPv6 v2: the RoCE v2 GID of the IPv4 address.
    ['roce-node', {}, 'mlx5_0', 3, '198.18.1.17', 'RoCE v2'],
    ['roce-node', { NCCL_IB_ADDR_FAMILY: 'AF_INET6' }, 'mlx5_0', 5, '2001:db8:1::17', 'RoCE v2'],
    ['roce-node', { NCCL_IB_ROCE_VERSION_NUM: '1' }, 'mlx5_0', 2, '198.18.1.17', 'IB/RoCE v1'],
    // NCCL_IB_ADDR_RANGE excludes mlx5_0's IPv4 GIDs, so GID 0 stays; mlx5_1's are inside.
    [
      'roce-node',
      { NCCL_IB_ADDR_RANGE: '198.18.2.0/24' },
      'mlx5_0',
      0,
      'fe80::c6ff:fe12:111',
      'IB/RoCE v1',
    ],
    ['roce-node', { NCCL_IB_ADDR_RANGE: '198.18.2.0/24' }, 'mlx5_1', 3, '198.18.2.17', 'RoCE v2'],
    [
      'roce-node',
      { NCCL_IB_ADDR_FAMILY: 'AF_INET6', NCCL_IB_ADDR_RANGE: '2001:db8::/32' },
      'mlx5_0',
      5,
      '2001:db8:1::17',
      'RoCE v2',
    ],
    [
      'roce-node',
      { NCCL_IB_ADDR_FAMILY: 'AF_INET6', NCCL_IB_ADDR_RANGE: '2001:db8:2::/48' },
      'mlx5_0',
      0,
      'fe80::c6ff:fe12:111',
      'IB/RoCE v1',
    ],
    // A range of the other family is invalid for NCCL and ignored.
    ['roce-node', { NCCL_IB_ADDR_RANGE: '2001:db8:2::/48' }, 'mlx5_0', 3, '198.18.1.17', 'RoCE v2'],
    // No address on eth2: nothing replaces GID 0.
    ['roce-node', {}, 'mlx5_2', 0, 'fe80::c6ff:fe12:311', 'IB/RoCE v1'],
    ['roce-node', { NCCL_IB_GID_INDEX: '2' }, 'mlx5_0', 2, '198.18.1.17', 'IB/RoCE v1'],
    ['roce-ipv6-only', {}, 'mlx5_0', 0, 'fe80::c6ff:fe12:112', 'IB/RoCE v1'],
    [
      'roce-ipv6-only',
      { NCCL_IB_ADDR_FAMILY: 'AF_INET6' },
      'mlx5_0',
      3,
      '2001:db8:1::18',
      'RoCE v2',
    ],
    // InfiniBand: GID 0 (no FLID at the routable index), whatever NCCL_IB_GID_INDEX says.
    ['ib-dgx', { NCCL_IB_GID_INDEX: '3' }, 'mlx5_0', 0, 'fe80::ba59:9f03:c:8d00', 'IB/RoCE v1'],
  ] as const)('%s with %j: %s uses GID %d (%s, %s)', (fixture, env, name, index, gid, type) => {
    const port = assess(fixture, env).verdict.devices.find((entry) => entry.name === name);
    expect(port).toMatchObject({ gidIndex: index, gid, gidType: type });
  });

  it('leaves the GID unset on a link layer NCCL does not use', () => {
    expect(assess('efa-node').verdict.devices[0]).toMatchObject({ gidIndex: null, gid: null });
  });

  it('reports whether any uverbs device file exists', () => {
    expect(assess('ib-dgx').verdict.deviceFiles).toBe(true);
    expect(assess('ib-container').verdict.deviceFiles).toBe(false);
  });
});
