import { describe, expect, it } from 'vitest';
import { routesCovering } from '../../../src/env/route-warnings.js';
import type { RouteEntry } from '../../../src/host/host-facts.js';

function route(destination: string, prefixLength: number, iface: string): RouteEntry {
  return {
    family: destination.includes(':') ? 'ipv6' : 'ipv4',
    destination,
    prefixLength,
    interface: iface,
    gateway: null,
    metric: 0,
    type: 'unicast',
  };
}

// The route warnings themselves are checkLocal's (test/unit/verify/check-local.test.ts).
describe('routesCovering', () => {
  it('lists the routes whose prefix holds the address, of its family only', () => {
    const routes = [
      route('198.18.10.0', 24, 'ens3f0'),
      route('198.18.20.0', 24, 'eth1'),
      route('198.18.10.1', 32, 'eth1'),
      route('203.0.113.0', 24, 'eth1'),
      route('2001:db8::', 32, 'eth1'),
    ];
    expect(
      routesCovering('198.18.10.1', routes).map((r) => `${r.destination}/${r.prefixLength}`),
    ).toEqual(['198.18.10.0/24', '198.18.10.1/32']);
    expect(routesCovering('2001:db8::7', routes)).toEqual([routes[4]]);
  });
});
