/**
 * The checks of a user's NCCL_IB_HCA and NCCL_IB_GID_INDEX, and of
 * `--require-transport ib`, over RDMA host snapshots (test/fixtures/rdma),
 * SPEC "RDMA transport": warnings naming what they saw, 78 for a NCCL_IB_HCA
 * that selects nothing or a setting that conflicts with the requirement, 69
 * for what is missing.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { EXIT } from '../../../src/exit-status.js';
import { assessTransport } from '../../../src/transport/assess-transport.js';
import { NO_PLUGIN } from '../../fixtures/rdma/net-plugin-search.js';
import { loadRdmaFacts, type RdmaFixture } from '../../fixtures/rdma/rdma-fixtures.js';

function assess(
  fixture: RdmaFixture | null,
  ncclEnv: Record<string, string> = {},
  required: 'ib' | null = null,
) {
  return assessTransport({
    rdma: fixture === null ? undefined : loadRdmaFacts(fixture).rdma,
    ncclEnv,
    required,
    requiredBy: { name: '--require-transport', from: 'flag' },
    netPlugin: NO_PLUGIN,
    facts: { interfaces: [] },
    originOf: (name) =>
      name === 'NCCL_IB_HCA'
        ? { name, from: 'nccl-conf', file: '/etc/nccl.conf' }
        : { name, from: 'env' },
  });
}

describe('NCCL_IB_HCA', () => {
  it('warns of a prefix collision, naming the devices it also takes and the exact spelling', () => {
    expect(assess('ib-dgx', { NCCL_IB_HCA: 'mlx5_1,mlx5_2' }).warnings).toEqual([
      "NCCL_IB_HCA='mlx5_1,mlx5_2' (set in /etc/nccl.conf): 'mlx5_1' also takes mlx5_10, mlx5_11 (NCCL matches names by prefix); start the list with '=' for exact names: NCCL_IB_HCA='=mlx5_1,mlx5_2'",
    ]);
    expect(assess('ib-dgx', { NCCL_IB_HCA: '^mlx5_1' }).warnings).toEqual([
      "NCCL_IB_HCA='^mlx5_1' (set in /etc/nccl.conf): 'mlx5_1' also excludes mlx5_10, mlx5_11 (NCCL matches names by prefix); start the list with '=' for exact names: NCCL_IB_HCA='^=mlx5_1'",
    ]);
  });

  it.each([
    // A prefix short of a device number is one on purpose; an exact list cannot collide.
    ['mlx5'],
    ['=mlx5_1'],
    ['mlx5_0:1,mlx5_2'],
    [''],
  ])('does not warn for %j', (value) => {
    expect(
      assess('ib-dgx', { NCCL_IB_HCA: value }).warnings.filter((w) => !w.includes('mlx5_5')),
    ).toEqual([]);
  });

  it('warns of an entry that matches nothing, and of a named port that is down', () => {
    expect(assess('ib-dgx', { NCCL_IB_HCA: '=mlx5_0,mlx5_12,mlx5_5,mlx5_2:2' }).warnings).toEqual([
      "NCCL_IB_HCA='=mlx5_0,mlx5_12,mlx5_5,mlx5_2:2' (set in /etc/nccl.conf): 'mlx5_12' matches no RDMA port here (mlx5_0:1, mlx5_1:1, mlx5_2:1, mlx5_3:1, mlx5_4:1, mlx5_5:1, mlx5_6:1, mlx5_7:1, mlx5_8:1, mlx5_9:1, mlx5_10:1, mlx5_11:1)",
      "NCCL_IB_HCA='=mlx5_0,mlx5_12,mlx5_5,mlx5_2:2' (set in /etc/nccl.conf): 'mlx5_5' names mlx5_5:1 (port DOWN), which NCCL skips",
      "NCCL_IB_HCA='=mlx5_0,mlx5_12,mlx5_5,mlx5_2:2' (set in /etc/nccl.conf): 'mlx5_2:2' matches no RDMA port here (mlx5_0:1, mlx5_1:1, mlx5_2:1, mlx5_3:1, mlx5_4:1, mlx5_5:1, mlx5_6:1, mlx5_7:1, mlx5_8:1, mlx5_9:1, mlx5_10:1, mlx5_11:1)",
    ]);
  });

  it('warns of a named device whose link layer NCCL does not use', () => {
    const { warnings } = assess('efa-node', { NCCL_IB_HCA: 'rdmap16s27' });
    expect(warnings[0]).toBe(
      "NCCL_IB_HCA='rdmap16s27' (set in /etc/nccl.conf): 'rdmap16s27' names rdmap16s27:1 (link layer Unknown), which NCCL skips",
    );
    // And that the EFA devices go unused without aws-ofi-nccl (net-plugin tests).
    expect(warnings[1]).toMatch(/^4 EFA device\(s\) .* but no net plugin/);
  });

  it.each([['mlx5_12'], ['=mlx5'], ['mlx5_0:2'], ['^mlx5'], ['^']])(
    '%j selects no port here: 78, naming the ports there are',
    (value) => {
      const attempt = () => assess('ib-dgx', { NCCL_IB_HCA: value });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(
        `NCCL_IB_HCA='${value}' (set in /etc/nccl.conf) matches no RDMA port here, so NCCL would find no IB device and run on sockets; ports here: mlx5_0:1, mlx5_1:1`,
      );
    },
  );

  it('selecting only a down port is no 78: the port, not the setting, is what is wrong', () => {
    expect(assess('ib-dgx', { NCCL_IB_HCA: 'mlx5_5' }).verdict.kind).toBe('socket');
  });

  it('warns without failing on a host without RDMA devices', () => {
    expect(assess(null, { NCCL_IB_HCA: 'mlx5_0' }).warnings).toEqual([
      "NCCL_IB_HCA='mlx5_0' (set in /etc/nccl.conf), but this host has no RDMA devices",
    ]);
  });

  it('is not checked when the IB transport is off', () => {
    expect(assess('ib-dgx', { NCCL_IB_HCA: 'mlx5_12', NCCL_IB_DISABLE: '1' }).warnings).toEqual([]);
  });
});

describe('NCCL_IB_GID_INDEX', () => {
  it.each([
    [
      '2',
      [
        'NCCL_IB_GID_INDEX=2 (set in the environment): on mlx5_0:1 (eth0) GID 2 is RoCE v1 (198.18.1.17), which does not route between subnets; unset, NCCL would take GID 3 (RoCE v2 198.18.1.17)',
        'NCCL_IB_GID_INDEX=2 (set in the environment): on mlx5_1:1 (eth1) GID 2 is RoCE v1 (198.18.2.17), which does not route between subnets; unset, NCCL would take GID 3 (RoCE v2 198.18.2.17)',
        'NCCL_IB_GID_INDEX=2 (set in the environment): on mlx5_2:1 (eth2) GID 2 is empty; unset, NCCL would take GID 0 (IB/RoCE v1 fe80::c6ff:fe12:311)',
      ],
    ],
    [
      '1',
      [
        'NCCL_IB_GID_INDEX=1 (set in the environment): on mlx5_0:1 (eth0) GID 1 is link-local (fe80::c6ff:fe12:111), which no other host can reach; unset, NCCL would take GID 3 (RoCE v2 198.18.1.17)',
        'NCCL_IB_GID_INDEX=1 (set in the environment): on mlx5_1:1 (eth1) GID 1 is link-local (fe80::c6ff:fe12:211), which no other host can reach; unset, NCCL would take GID 3 (RoCE v2 198.18.2.17)',
        'NCCL_IB_GID_INDEX=1 (set in the environment): on mlx5_2:1 (eth2) GID 1 is link-local (fe80::c6ff:fe12:311), which no other host can reach; unset, NCCL would take GID 0 (IB/RoCE v1 fe80::c6ff:fe12:311)',
      ],
    ],
    [
      '0x12c',
      [
        'NCCL_IB_GID_INDEX=0x12c (set in the environment): on mlx5_0:1 (eth0) GID 300 is past the end of its 255-slot GID table; unset, NCCL would take GID 3 (RoCE v2 198.18.1.17)',
        'NCCL_IB_GID_INDEX=0x12c (set in the environment): on mlx5_1:1 (eth1) GID 300 is past the end of its 255-slot GID table; unset, NCCL would take GID 3 (RoCE v2 198.18.2.17)',
        'NCCL_IB_GID_INDEX=0x12c (set in the environment): on mlx5_2:1 (eth2) GID 300 is past the end of its 255-slot GID table; unset, NCCL would take GID 0 (IB/RoCE v1 fe80::c6ff:fe12:311)',
      ],
    ],
  ])('NCCL_IB_GID_INDEX=%s on a RoCE node', (value, warnings) => {
    expect(assess('roce-node', { NCCL_IB_GID_INDEX: value }).warnings).toEqual(warnings);
  });

  it('a RoCE v2 GID with an address is fine where it exists', () => {
    expect(assess('roce-node', { NCCL_IB_GID_INDEX: '3' }).warnings).toEqual([
      'NCCL_IB_GID_INDEX=3 (set in the environment): on mlx5_2:1 (eth2) GID 3 is empty; unset, NCCL would take GID 0 (IB/RoCE v1 fe80::c6ff:fe12:311)',
    ]);
  });

  it("warns when NCCL's own choice has no RoCE v2 GID of the family, with the fix", () => {
    expect(assess('roce-node').warnings).toEqual([
      'mlx5_2:1 (eth2) has no valid RoCE v2 GID with an IPv4 address, so NCCL will use GID 0 (IB/RoCE v1 fe80::c6ff:fe12:311); give eth2 an IPv4 address',
    ]);
    expect(assess('roce-ipv6-only').warnings).toEqual([
      'mlx5_0:1 (eth0) has no valid RoCE v2 GID with an IPv4 address, so NCCL will use GID 0 (IB/RoCE v1 fe80::c6ff:fe12:112); it has one of IPv6: NCCL_IB_ADDR_FAMILY=AF_INET6 takes it',
    ]);
    expect(assess('roce-ipv6-only', { NCCL_IB_ADDR_FAMILY: 'AF_INET6' }).warnings).toEqual([]);
  });

  it('is not read for InfiniBand ports, as in NCCL', () => {
    expect(assess('ib-dgx', { NCCL_IB_GID_INDEX: '7' }).warnings).toEqual([]);
  });
});

describe('--require-transport ib', () => {
  it('is met where NCCL finds a port', () => {
    expect(assess('ib-dgx', {}, 'ib').unmet).toBeNull();
    expect(assess('roce-node', {}, 'ib').unmet).toBeNull();
  });

  it.each([
    [
      'ib-container',
      "--require-transport ib: NCCL's IB transport cannot run here: no /dev/infiniband in this container (start the container with the devices, e.g. docker run --device=/dev/infiniband)",
    ],
    [
      'efa-node',
      "--require-transport ib: NCCL's IB transport cannot run here: no port NCCL can use: rdmap16s27:1 link layer Unknown",
    ],
    [
      null,
      "--require-transport ib: NCCL's IB transport cannot run here: no RDMA devices in /sys/class/infiniband",
    ],
  ] as const)('%s: exit 69 naming what is missing', (fixture, message) => {
    const unmet = assess(fixture, {}, 'ib').unmet;
    expect(unmet?.exitCode).toBe(EXIT.noInterface);
    expect(unmet?.message).toContain(message);
  });

  it.each([
    [{ NCCL_NET: 'Socket' }, 'NCCL_NET=Socket'],
    [{ NCCL_IB_DISABLE: '1' }, 'NCCL_IB_DISABLE=1'],
  ])('conflicts with %j: exit 78', (env, setting) => {
    const unmet = assess('ib-dgx', env, 'ib').unmet;
    expect(unmet?.exitCode).toBe(EXIT.config);
    expect(unmet?.message).toBe(
      `--require-transport ib conflicts with ${setting}, which keeps NCCL off its IB transport; unset it or drop --require-transport`,
    );
  });
});
