import { describe, expect, it } from 'vitest';
import { parseIpAddrShow } from '../../../src/host/ip-links.js';

describe('parseIpAddrShow', () => {
  it('reads the kernel link kind, the master kind and every address, a down interface included', () => {
    // `ip -j -d addr show`, trimmed: a bridge port (veth) and a down tap holding an address.
    const json = [
      {
        ifindex: 2,
        ifname: 'v1',
        flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
        operstate: 'UP',
        linkinfo: { info_kind: 'veth', info_slave_kind: 'bridge', info_slave_data: {} },
        addr_info: [
          { family: 'inet6', local: 'fe80::7c2f:62ff:fe41:b003', prefixlen: 64, scope: 'link' },
        ],
      },
      {
        ifindex: 8,
        ifname: 'tap0',
        flags: ['BROADCAST', 'MULTICAST'],
        operstate: 'DOWN',
        linkinfo: { info_kind: 'tun', info_data: { type: 'tap' } },
        addr_info: [
          { family: 'inet', local: '198.18.7.1', prefixlen: 24, scope: 'global', label: 'tap0' },
        ],
      },
      { ifindex: 4, ifname: 'eth0', operstate: 'UP', addr_info: [] },
      { ifname: 42 },
    ];
    expect(parseIpAddrShow(json)).toEqual([
      {
        name: 'v1',
        ifindex: 2,
        kind: 'veth',
        slaveKind: 'bridge',
        addresses: [
          { address: 'fe80::7c2f:62ff:fe41:b003', family: 'ipv6', prefixLength: 64, scope: 'link' },
        ],
      },
      {
        name: 'tap0',
        ifindex: 8,
        kind: 'tun',
        slaveKind: null,
        addresses: [{ address: '198.18.7.1', family: 'ipv4', prefixLength: 24, scope: 'global' }],
      },
      { name: 'eth0', ifindex: 4, kind: null, slaveKind: null, addresses: [] },
    ]);
  });

  it('yields nothing when ip could not answer', () => {
    expect(parseIpAddrShow(null)).toEqual([]);
  });
});
