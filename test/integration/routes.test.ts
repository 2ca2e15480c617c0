/**
 * routeTo() against the kernel of a namespace host: live through
 * `ip -j route get`, live through /proc on a PATH without `ip`, and replayed
 * from the facts each of those runs read (the `--facts` path). All four must
 * give the kernel's answer.
 *
 * The host: data0 198.18.1.1/24 + 2001:db8:1::1/64, mgmt0 203.0.113.1/24;
 * 198.19.0.0/16 via a gateway on data0, the overlapping 198.19.7.0/24 via a
 * gateway on mgmt0; two IPv4 defaults (metric 100 on mgmt0, 200 on data0);
 * 2001:db8:99::/48 via a gateway on data0 and no IPv6 default.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RouteAnswer } from '../../src/host/host-facts.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const READ = new URL('../../src/host/read-host-facts.ts', import.meta.url).pathname;
const ROUTES = new URL('../../src/host/routes.ts', import.meta.url).pathname;

const ADDRESSES = [
  '198.18.1.77', // directly connected
  '198.19.8.9', // the /16 via a gateway on data0
  '198.19.7.9', // the overlapping /24 via mgmt0: longest prefix wins
  '198.18.200.1', // only the defaults cover it: metric 100 (mgmt0) beats 200 (data0)
  '2001:db8:1::77', // IPv6, directly connected
  '2001:db8:99::5', // IPv6 via a gateway
  '198.18.1.1', // this host's own
  '2001:db8:1::1', // this host's own, IPv6
  '127.0.0.1', // loopback
  '2001:db8:aaaa::1', // no route at all
];

const PRINT_ROUTES = `
import { readHostFacts } from ${JSON.stringify(READ)};
import { routeTo } from ${JSON.stringify(ROUTES)};
const facts = await readHostFacts();
const addresses = ${JSON.stringify(ADDRESSES)};
console.log(JSON.stringify({
  live: await routeTo(addresses, facts, true),
  replay: await routeTo(addresses, facts, false),
}));
`;

const answer = (
  destination: string,
  iface: string,
  source: string,
  gateway: string | null = null,
  type: RouteAnswer['type'] = 'unicast',
): RouteAnswer => ({ destination, interface: iface, source, gateway, type });

const EXPECTED: RouteAnswer[] = [
  answer('198.18.1.77', 'data0', '198.18.1.1'),
  answer('198.19.8.9', 'data0', '198.18.1.1', '198.18.1.254'),
  answer('198.19.7.9', 'mgmt0', '203.0.113.1', '203.0.113.254'),
  answer('198.18.200.1', 'mgmt0', '203.0.113.1', '203.0.113.254'),
  answer('2001:db8:1::77', 'data0', '2001:db8:1::1'),
  answer('2001:db8:99::5', 'data0', '2001:db8:1::1', '2001:db8:1::fe'),
  answer('198.18.1.1', 'data0', '198.18.1.1', null, 'local'),
  answer('2001:db8:1::1', 'data0', '2001:db8:1::1', null, 'local'),
  answer('127.0.0.1', 'lo', '127.0.0.1', null, 'local'),
];

interface Printed {
  live: RouteAnswer[];
  replay: RouteAnswer[];
}

tier('routeTo on a namespace host', netnsUnavailable, () => {
  const lab = new Lab('rt');
  let withIp: Printed;
  let withoutIp: Printed;

  beforeAll(async () => {
    await lab.host('h');
    await lab.host('p');
    await lab.link('h', 'data0', 'p', 'peer0');
    await lab.link('h', 'mgmt0', 'p', 'peer1');
    await lab.addr('h', 'data0', '198.18.1.1/24');
    await lab.addr('h', 'data0', '2001:db8:1::1/64');
    await lab.addr('h', 'mgmt0', '203.0.113.1/24');
    await lab.ip('h', 'route', 'add', '198.19.0.0/16', 'via', '198.18.1.254');
    await lab.ip('h', 'route', 'add', '198.19.7.0/24', 'via', '203.0.113.254');
    await lab.ip('h', 'route', 'add', 'default', 'via', '203.0.113.254', 'metric', '100');
    await lab.ip('h', 'route', 'add', 'default', 'via', '198.18.1.254', 'metric', '200');
    await lab.ip('h', '-6', 'route', 'add', '2001:db8:99::/48', 'via', '2001:db8:1::fe');

    const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', PRINT_ROUTES];
    const [ipRun, noIpRun] = await Promise.all([
      lab.exec('h', node[0] as string, node.slice(1)),
      // No `ip` on PATH: routeTo and readHostFacts fall back to /proc by themselves.
      lab.exec('h', '/usr/bin/env', ['PATH=/nonexistent', ...node]),
    ]);
    withIp = JSON.parse(String(ipRun.stdout));
    withoutIp = JSON.parse(String(noIpRun.stdout));
  });

  afterAll(() => lab.cleanup());

  it('asks the kernel (ip -j route get) and names the owner of a local address, not lo', () => {
    expect(withIp.live).toEqual(EXPECTED);
  });

  it('replays the same answers from the facts read with iproute2', () => {
    expect(withIp.replay).toEqual(EXPECTED);
  });

  it('matches /proc/net/route and /proc/net/ipv6_route the same way without iproute2', () => {
    expect(withoutIp.live).toEqual(EXPECTED);
  });

  it('replays the same answers from the facts read from /proc', () => {
    expect(withoutIp.replay).toEqual(EXPECTED);
  });
});
