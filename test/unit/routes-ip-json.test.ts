import { describe, expect, it } from 'vitest';
import { parseIpRouteGet } from '../../src/host/ip-routes.js';

// `ip -4 -j route show table all` from a namespace (iproute2 6.1), trimmed.
const IPV4_TABLE = [
  { dst: '198.19.50.0/24', gateway: '198.18.5.3', dev: 'v0', table: '100', flags: [] },
  {
    dst: '198.18.5.0/24',
    dev: 'v0',
    protocol: 'kernel',
    scope: 'link',
    prefsrc: '198.18.5.1',
    flags: [],
  },
  { dst: 'default', gateway: '198.18.5.254', dev: 'v0', metric: 20, flags: [] },
  { type: 'blackhole', dst: '198.18.98.0/24', flags: [] },
  { type: 'unreachable', dst: '198.18.99.0/24', flags: [] },
  {
    dst: '198.19.0.0/16',
    flags: [],
    nexthops: [
      { gateway: '198.18.5.2', dev: 'v0', weight: 1, flags: [] },
      { gateway: '198.18.6.2', dev: 'br0', weight: 1, flags: [] },
    ],
  },
  {
    type: 'local',
    dst: '127.0.0.0/8',
    dev: 'lo',
    table: 'local',
    protocol: 'kernel',
    scope: 'host',
    prefsrc: '127.0.0.1',
    flags: [],
  },
  {
    type: 'local',
    dst: '198.18.5.1',
    dev: 'v0',
    table: 'local',
    protocol: 'kernel',
    scope: 'host',
    prefsrc: '198.18.5.1',
    flags: [],
  },
  {
    type: 'broadcast',
    dst: '198.18.5.255',
    dev: 'v0',
    table: 'local',
    protocol: 'kernel',
    scope: 'link',
    prefsrc: '198.18.5.1',
    flags: [],
  },
];

const IPV6_TABLE = [
  {
    type: 'unreachable',
    dst: '2001:db8:99::/48',
    dev: 'lo',
    metric: 1024,
    flags: [],
    pref: 'medium',
  },
  { dst: '2001:db8:5::/64', dev: 'v0', protocol: 'kernel', metric: 256, flags: [], pref: 'medium' },
  { dst: 'default', gateway: '2001:db8:5::2', dev: 'v0', metric: 1024, flags: [], pref: 'medium' },
  {
    type: 'local',
    dst: '2001:db8:5::1',
    dev: 'v0',
    table: 'local',
    protocol: 'kernel',
    metric: 0,
    flags: [],
    pref: 'medium',
  },
  {
    type: 'multicast',
    dst: 'ff00::/8',
    dev: 'v0',
    table: 'local',
    protocol: 'kernel',
    metric: 256,
    flags: [],
    pref: 'medium',
  },
];

describe('parseIpRouteGet', () => {
  it('reads a route via a gateway', () => {
    const json = [
      {
        dst: '203.0.113.1',
        gateway: '192.0.2.1',
        dev: 'eth0',
        prefsrc: '192.0.2.2',
        flags: [],
        uid: 0,
        cache: [],
      },
    ];
    expect(parseIpRouteGet(json)).toEqual({
      destination: '203.0.113.1',
      interface: 'eth0',
      source: '192.0.2.2',
      gateway: '192.0.2.1',
      type: 'unicast',
    });
  });

  it('reads a local answer as the kernel gives it (dev lo)', () => {
    const json = [
      {
        type: 'local',
        dst: '198.18.5.1',
        dev: 'lo',
        table: 'local',
        prefsrc: '198.18.5.1',
        flags: [],
        uid: 0,
        cache: ['local'],
      },
    ];
    expect(parseIpRouteGet(json)).toEqual({
      destination: '198.18.5.1',
      interface: 'lo',
      source: '198.18.5.1',
      gateway: null,
      type: 'local',
    });
  });

  it('has no answer for a broadcast destination or empty output', () => {
    expect(parseIpRouteGet([{ type: 'broadcast', dst: '198.18.5.255', dev: 'v0' }])).toBeNull();
    expect(parseIpRouteGet([])).toBeNull();
  });
});
