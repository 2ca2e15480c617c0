import { describe, expect, it } from 'vitest';
import { parseIpRouteGet } from '../../../src/host/ip-routes.js';

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
