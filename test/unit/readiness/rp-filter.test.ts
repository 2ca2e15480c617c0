/**
 * Reverse-path filtering as a table: strict (1, the larger of all and the
 * interface) on a multi-homed host whose route back to a known peer leaves
 * by another interface is a warning; everything else passes.
 */
import { describe, expect, it } from 'vitest';
import type { ReadinessNeeds } from '../../../src/readiness/needs.js';
import { findingOf, jobNeeds, nodeFacts } from '../../fixtures/readiness.js';

const needs = (
  otherInterfaces: string[],
  routesBack: { address: string; interface: string | null }[],
  family: 'ipv4' | 'ipv6' = 'ipv4',
): ReadinessNeeds =>
  jobNeeds({
    network: { interface: 'ens3f0', family, otherInterfaces, routesBack, peerMtus: [] },
  });
const rp = (all: number | null, iface: number | null) =>
  nodeFacts({
    network: { interface: 'ens3f0', mtu: 9000, vendor: null, rpFilter: { all, interface: iface } },
  });
const master = { address: '198.18.10.1', interface: 'ens3f0' };
const viaMgmt = { address: '198.18.30.2', interface: 'eno1' };

describe('rp-filter', () => {
  it.each([
    // what, level, needs, node
    ['off', 'ok', needs(['eno1'], [viaMgmt]), rp(0, 0)],
    [
      'loose (2) on the interface, strict (1) in all: the larger, loose',
      'ok',
      needs(['eno1'], [viaMgmt]),
      rp(1, 2),
    ],
    ['strict in all, on a host of one network', 'ok', needs([], [viaMgmt]), rp(1, 0)],
    [
      'strict, multi-homed, the routes back by the interface',
      'ok',
      needs(['eno1'], [master]),
      rp(1, 0),
    ],
    [
      'strict in all, multi-homed, a route back by eno1',
      'warning',
      needs(['eno1'], [master, viaMgmt]),
      rp(1, 0),
    ],
    [
      'strict on the interface only, a route back by eno1',
      'warning',
      needs(['eno1'], [viaMgmt]),
      rp(0, 1),
    ],
    [
      'strict, no route back at all',
      'warning',
      needs(['eno1'], [{ address: '203.0.113.9', interface: null }]),
      rp(1, 1),
    ],
    ['IPv6', 'ok', needs(['eno1'], [viaMgmt], 'ipv6'), rp(1, 1)],
    ['unreadable', 'ok', needs(['eno1'], [viaMgmt]), rp(null, null)],
  ] as const)('%s: %s', (_, level, jobNeeds, node) => {
    expect(findingOf('rp-filter', jobNeeds, node).level).toBe(level);
  });

  it('names the values, the route that leaves elsewhere, and the sysctls', () => {
    const finding = findingOf('rp-filter', needs(['eno1'], [master, viaMgmt]), {
      ...rp(1, 0),
      contexts: ['kubernetes'],
    });
    expect(finding).toMatchObject({
      level: 'warning',
      evidence:
        'rp_filter 1 on ens3f0 (the larger of all=1 and ens3f0=0): strict on a host also on eno1, and the route back to 198.18.30.2 leaves by eno1: the kernel drops what arrives from there on ens3f0, silently',
      fix: "loose filtering (2), or a route to the peers' network by ens3f0: securityContext.sysctls net.ipv4.conf.all.rp_filter=2, net.ipv4.conf.ens3f0.rp_filter=2 (an unsafe sysctl, which the kubelet must allow with --allowed-unsafe-sysctls)",
    });
  });
});
