import { describe, expect, it } from 'vitest';
import { parseProcIpv6Route, parseProcNetRoute } from '../../../src/host/proc-routes.js';

// Captured from a namespace on this (little-endian) machine: a connected /24,
// a blackhole ("*"), an unreachable (RTF_REJECT 0x0200) and a multipath /16
// (the kernel prints its first nexthop). Lines are padded to 127 columns.
const PROC_NET_ROUTE = [
  'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT'.padEnd(127),
  'v0\t000512C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0'.padEnd(127),
  '*\t006212C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0'.padEnd(127),
  '*\t006312C6\t00000000\t0201\t0\t0\t0\t00FFFFFF\t0\t0\t0'.padEnd(127),
  'v0\t000013C6\t020512C6\t0003\t0\t0\t0\t0000FFFF\t0\t0\t0'.padEnd(127),
  'eth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0'.padEnd(127),
  '',
].join('\n');

const PROC_IPV6_ROUTE = [
  '20010db8000500000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001       v0',
  '00000000000000000000000000000000 00 00000000000000000000000000000000 00 20010db8000500000000000000000002 00000400 00000001 00000000 00000003       v0',
  '20010db8009900000000000000000000 30 00000000000000000000000000000000 00 00000000000000000000000000000000 00000400 00000001 00000000 00200200       lo',
  '00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000003 00000000 80200001       lo',
  '20010db8000500000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       v0',
  'ff000000000000000000000000000000 08 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000003 00000000 00000001       v0',
  '20010db8000700000000000000000000 40 20010db8000800000000000000000000 40 00000000000000000000000000000000 00000400 00000001 00000000 00000001       v0',
  '00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo',
  '',
].join('\n');

describe('parseProcNetRoute', () => {
  it('reads destinations, masks and gateways byte-reversed on little-endian, dropping reject and device-less routes', () => {
    expect(parseProcNetRoute(PROC_NET_ROUTE, 'LE')).toEqual([
      {
        family: 'ipv4',
        destination: '198.18.5.0',
        prefixLength: 24,
        interface: 'v0',
        gateway: null,
        metric: 0,
        type: 'unicast',
      },
      {
        family: 'ipv4',
        destination: '198.19.0.0',
        prefixLength: 16,
        interface: 'v0',
        gateway: '198.18.5.2',
        metric: 0,
        type: 'unicast',
      },
      {
        family: 'ipv4',
        destination: '0.0.0.0',
        prefixLength: 0,
        interface: 'eth0',
        gateway: '192.0.2.1',
        metric: 100,
        type: 'unicast',
      },
    ]);
  });

  it('reads the printed order as is on a big-endian kernel', () => {
    const text = `${PROC_NET_ROUTE.split('\n')[0]}\neth0\tC6120500\tC6120501\t0003\t0\t0\t5\tFFFFFF00\t0\t0\t0\n`;
    expect(parseProcNetRoute(text, 'BE')).toEqual([
      {
        family: 'ipv4',
        destination: '198.18.5.0',
        prefixLength: 24,
        interface: 'eth0',
        gateway: '198.18.5.1',
        metric: 5,
        type: 'unicast',
      },
    ]);
  });

  it('yields nothing for an empty or garbled file', () => {
    expect(parseProcNetRoute('', 'LE')).toEqual([]);
    expect(parseProcNetRoute('Iface\nnot a route line\neth0\tZZ\n', 'LE')).toEqual([]);
  });
});

describe('parseProcIpv6Route', () => {
  it('reads prefixes, gateways and metrics, marks RTF_LOCAL routes local, and drops reject, multicast and source-specific routes', () => {
    expect(parseProcIpv6Route(PROC_IPV6_ROUTE)).toEqual([
      {
        family: 'ipv6',
        destination: '2001:db8:5::',
        prefixLength: 64,
        interface: 'v0',
        gateway: null,
        metric: 256,
        type: 'unicast',
      },
      {
        family: 'ipv6',
        destination: '::',
        prefixLength: 0,
        interface: 'v0',
        gateway: '2001:db8:5::2',
        metric: 1024,
        type: 'unicast',
      },
      {
        family: 'ipv6',
        destination: '::1',
        prefixLength: 128,
        interface: 'lo',
        gateway: null,
        metric: 0,
        type: 'local',
      },
      {
        family: 'ipv6',
        destination: '2001:db8:5::1',
        prefixLength: 128,
        interface: 'v0',
        gateway: null,
        metric: 0,
        type: 'local',
      },
    ]);
  });

  it('yields nothing for an empty file (IPv6 disabled)', () => {
    expect(parseProcIpv6Route('')).toEqual([]);
  });
});
