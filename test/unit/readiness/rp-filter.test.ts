/**
 * Reverse-path filtering as a table: strict (1, the larger of all and the
 * interface) on a multi-homed host whose route back to a known peer leaves
 * by another interface is a warning; everything else passes.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ReadinessNeeds } from '../../../src/readiness/needs.js';
import type { NodeReadiness } from '../../../src/readiness/node-readiness.js';
import {
  CHECKOUT,
  findingOf,
  jobNeeds,
  nodeFacts,
  READER_ENV,
  readerArgv,
} from '../../fixtures/readiness.js';
import { Lab, netnsUnavailable } from '../../lab/netns.js';
import { tier } from '../../lab/tier.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const needs = (
  otherInterfaces: string[],
  routesBack: { address: string; interface: string | null }[],
  family: 'ipv4' | 'ipv6' = 'ipv4',
): ReadinessNeeds =>
  jobNeeds({
    network: { interface: 'ens3f0', family, otherInterfaces, routesBack },
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

/**
 * The rule the check follows, on a real kernel: a multi-homed "host"
 * namespace (d0 on the data network, m0 with the default route) and a peer
 * whose address the host routes back by m0. What the peer sends to d0's
 * address is dropped under strict filtering (the kernel counts it as
 * IPReversePathFilter) and delivered under loose; the reader and the check
 * see the same.
 */
tier('rp_filter on a real kernel (network namespaces)', netnsUnavailable, () => {
  const lab = new Lab('rpf');
  beforeAll(async () => {
    for (const host of ['h', 'p', 'g']) await lab.host(host);
    await lab.link('h', 'd0', 'p', 'p0');
    await lab.link('h', 'm0', 'g', 'g0');
    await lab.addr('h', 'd0', '198.18.10.1/24');
    await lab.addr('h', 'm0', '198.18.20.1/24');
    await lab.addr('g', 'g0', '198.18.20.254/24');
    await lab.ip('h', 'route', 'add', 'default', 'via', '198.18.20.254', 'dev', 'm0');
    await lab.addr('p', 'p0', '198.18.30.2/24');
    await lab.ip('p', 'route', 'add', '198.18.10.0/24', 'dev', 'p0');
    // No ARP: the host would not answer a source it filters.
    const { stdout } = await lab.exec('h', 'cat', ['/sys/class/net/d0/address']);
    await lab.ip('p', 'neigh', 'add', '198.18.10.1', 'lladdr', String(stdout).trim(), 'dev', 'p0');
  });
  afterAll(() => lab.cleanup());

  const sysctl = (name: string, value: number) =>
    lab.exec('h', 'sh', ['-c', `echo ${value} > /proc/sys/net/ipv4/conf/${name}/rp_filter`]);
  const dropped = async () => {
    const { stdout } = await lab.exec('h', 'cat', ['/proc/net/netstat']);
    const [names, values] = String(stdout)
      .split('\n')
      .filter((line) => line.startsWith('TcpExt:'))
      .map((line) => line.split(/\s+/));
    return Number(values?.[names?.indexOf('IPReversePathFilter') ?? -1]);
  };
  const send = () =>
    lab.exec('p', process.execPath, [
      '-e',
      "const d = require('dgram').createSocket('udp4'); d.bind(0, '198.18.30.2', () => d.send('x', 40000, '198.18.10.1', () => d.close()));",
    ]);
  const findingHere = async () => {
    const [node = '', ...args] = readerArgv('d0');
    const { stdout } = await lab.exec('h', node, args, {
      cwd: CHECKOUT,
      env: READER_ENV,
      extendEnv: false,
    });
    const { stdout: route } = await lab.exec('h', 'ip', ['-j', 'route', 'get', '198.18.30.2']);
    const back = (JSON.parse(String(route)) as { dev: string }[])[0]?.dev ?? null;
    const needs = jobNeeds({
      network: {
        interface: 'd0',
        family: 'ipv4',
        otherInterfaces: ['m0'],
        routesBack: [{ address: '198.18.30.2', interface: back }],
      },
    });
    return findingOf('rp-filter', needs, JSON.parse(String(stdout)) as NodeReadiness);
  };

  it("strict: the peer's datagram is dropped, and the check warns of that route", async () => {
    await sysctl('all', 1);
    await sysctl('d0', 0);
    const before = await dropped();
    await send();
    await expect.poll(dropped, { timeout: 5_000 }).toBeGreaterThan(before);
    expect(await findingHere()).toMatchObject({
      level: 'warning',
      evidence: expect.stringContaining('the route back to 198.18.30.2 leaves by m0'),
    });
  });

  it('loose: the same datagram arrives, and the check passes', async () => {
    await sysctl('all', 2);
    const receiver = lab.exec('h', process.execPath, [
      '-e',
      "const d = require('dgram').createSocket('udp4'); d.on('message', (m, r) => { console.log('got ' + r.address); process.exit(0); }); d.bind(40000, '198.18.10.1', () => console.log('listening'));",
    ]);
    await new Promise<void>((resolve) => {
      receiver.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('listening')) resolve();
      });
    });
    const before = await dropped();
    await send();
    expect(String((await receiver).stdout)).toContain('got 198.18.30.2');
    expect(await dropped()).toBe(before);
    expect((await findingHere()).level).toBe('ok');
  });
});
