/**
 * readHostFacts() on real kernels: hosts made of network namespaces with
 * veth, bridge (and a bridge port), macvlan, vxlan and tun links, a down
 * interface that holds an address, and a link speed faked through sysfs
 * (shared/LAB.md: `unshare -m` + `mount --bind` over /sys/class/net/IF/speed).
 * Each host runs the real module under tsx and prints its facts as JSON,
 * once with iproute2 on PATH and once without (sysfs, /proc and Node only).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { HostFacts, InterfaceFacts } from '../../src/host/host-facts.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const MODULE = new URL('../../src/host/read-host-facts.ts', import.meta.url).pathname;

/** Prints {facts, nodeSees} for the namespace it runs in: what Node alone lists, to show the gap ip fills. */
const PRINT_FACTS = `
import { networkInterfaces } from 'node:os';
import { readHostFacts } from ${JSON.stringify(MODULE)};
const facts = await readHostFacts();
console.log(JSON.stringify({ facts, nodeSees: Object.keys(networkInterfaces()) }));
`;

interface Printed {
  facts: HostFacts;
  nodeSees: string[];
}

/** `node --import tsx` inside the host; `withoutIp` runs it with a PATH that has no `ip`. */
function nodeArgs(script: string, withoutIp: boolean): string[] {
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', script];
  return withoutIp ? ['PATH=/nonexistent', ...node] : node;
}

function byName(facts: HostFacts): Map<string, InterfaceFacts> {
  return new Map(facts.interfaces.map((iface) => [iface.name, iface]));
}

function addressesOf(iface: InterfaceFacts | undefined): string[] {
  return (iface?.addresses ?? []).map(
    (address) => `${address.address}/${address.prefixLength} ${address.scope}`,
  );
}

tier(
  'readHostFacts in a namespace with every kind of link this kernel offers',
  netnsUnavailable,
  () => {
    const lab = new Lab('hf');
    const workdir = mkdtempSync(join(tmpdir(), 'ncr-host-facts-'));
    let withIp: Printed;
    let withoutIp: Printed;

    beforeAll(async () => {
      await lab.host('h');
      await lab.host('p');
      await lab.link('h', 'data0', 'p', 'peer0');
      await lab.addr('h', 'data0', '198.18.1.1/24');
      await lab.addr('h', 'data0', '2001:db8:1::1/64');

      // A bridge with one veth port; the bridge holds the address, the port none.
      await lab.ip('h', 'link', 'add', 'br0', 'type', 'bridge');
      await lab.link('h', 'brport0', 'p', 'peer1');
      await lab.ip('h', 'link', 'set', 'brport0', 'master', 'br0');
      await lab.ip('h', 'link', 'set', 'br0', 'up');
      await lab.addr('h', 'br0', '198.18.2.1/24');

      await lab.ip('h', 'link', 'add', 'mv0', 'link', 'data0', 'type', 'macvlan', 'mode', 'bridge');
      await lab.ip('h', 'link', 'set', 'mv0', 'up');
      await lab.addr('h', 'mv0', '198.18.3.1/24');

      await lab.ip(
        'h',
        'link',
        'add',
        'vx0',
        'type',
        'vxlan',
        'id',
        '42',
        'dev',
        'data0',
        'local',
        '198.18.1.1',
        'dstport',
        '4789',
      );
      await lab.ip('h', 'link', 'set', 'vx0', 'up');
      await lab.addr('h', 'vx0', '198.18.4.1/24');

      await lab.exec('h', 'ip', ['tuntap', 'add', 'tun0', 'mode', 'tun']);

      // Admin-down, yet holding an address: Node's libuv skips it (not IFF_UP|IFF_RUNNING).
      await lab.link('h', 'down0', 'p', 'peer2');
      await lab.addr('h', 'down0', '198.18.5.1/24');
      await lab.ip('h', 'link', 'set', 'down0', 'down');

      // veth reports 10000 Mb/s; a bind-mounted file makes it read 40000, as a 40G NIC would.
      const speed = join(workdir, 'speed');
      writeFileSync(speed, '40000\n');
      const faked = (withoutIp: boolean) =>
        lab.exec('h', 'unshare', [
          '-m',
          'sh',
          '-c',
          `mount --bind ${speed} /sys/class/net/data0/speed && exec "$@"`,
          'sh',
          ...(withoutIp ? ['/usr/bin/env'] : []),
          ...nodeArgs(PRINT_FACTS, withoutIp),
        ]);
      const [ipRun, noIpRun] = await Promise.all([faked(false), faked(true)]);
      withIp = JSON.parse(String(ipRun.stdout));
      withoutIp = JSON.parse(String(noIpRun.stdout));
    });

    afterAll(async () => {
      await lab.cleanup();
      rmSync(workdir, { recursive: true, force: true });
    });

    it('lists every interface, those without an address or down included', () => {
      for (const printed of [withIp, withoutIp]) {
        expect(printed.facts.interfaces.map((iface) => iface.name).sort()).toEqual(
          ['br0', 'brport0', 'data0', 'down0', 'lo', 'mv0', 'tun0', 'vx0'].sort(),
        );
      }
      expect(withIp.nodeSees).not.toContain('down0');
      expect(withIp.nodeSees).not.toContain('tun0');
    });

    it('classifies each link by kind, with and without iproute2', async () => {
      const expected = {
        lo: 'loopback',
        data0: 'veth',
        br0: 'bridge',
        brport0: 'veth',
        mv0: 'macvlan',
        vx0: 'tunnel',
        tun0: 'tunnel',
        down0: 'veth',
      };
      const kinds = (printed: Printed) =>
        Object.fromEntries(printed.facts.interfaces.map((iface) => [iface.name, iface.kind]));
      expect(kinds(withIp)).toEqual(expected);
      // sysfs alone knows a veth only by iflink (its peer's index) differing from its own
      // ifindex; a peer in another namespace can have the same number. Then it is just virtual.
      const { stdout } = await execa('ip', ['-n', lab.ns('h'), '-j', 'link', 'show']);
      const links = JSON.parse(stdout) as Array<{
        ifname: string;
        ifindex: number;
        link_index?: number;
      }>;
      const sysfsOnly = { ...expected };
      for (const name of ['data0', 'brport0', 'down0'] as const) {
        const link = links.find((entry) => entry.ifname === name);
        if (link?.link_index === link?.ifindex) sysfsOnly[name] = 'other-virtual';
      }
      expect(kinds(withoutIp)).toEqual(sysfsOnly);
    });

    it('reads state, carrier, MTU and the (faked) speed from sysfs', () => {
      const facts = byName(withIp.facts);
      expect(facts.get('data0')).toMatchObject({
        operstate: 'up',
        carrier: true,
        mtu: 1500,
        speedMbps: 40000,
        master: null,
        rdma: null,
      });
      // Untouched veth speed, as the kernel reports it (LAB.md: 10000).
      expect(facts.get('brport0')).toMatchObject({
        operstate: 'up',
        speedMbps: 10000,
        master: 'br0',
      });
      // Down: carrier and speed are EINVAL in sysfs, read as unknown.
      expect(facts.get('down0')).toMatchObject({
        operstate: 'down',
        carrier: null,
        speedMbps: null,
      });
      expect(facts.get('lo')).toMatchObject({ operstate: 'unknown', mtu: 65536, speedMbps: null });
      expect(byName(withoutIp.facts).get('data0')?.speedMbps).toBe(40000);
    });

    it("reads addresses with prefix and scope, including the down interface's from ip addr", () => {
      const facts = byName(withIp.facts);
      expect(addressesOf(facts.get('lo'))).toEqual(['127.0.0.1/8 host', '::1/128 host']);
      expect(addressesOf(facts.get('data0'))).toEqual(
        expect.arrayContaining([
          '198.18.1.1/24 global',
          '2001:db8:1::1/64 global',
          expect.stringMatching(/^fe80::.*\/64 link$/),
        ]),
      );
      expect(addressesOf(facts.get('br0'))).toContain('198.18.2.1/24 global');
      expect(addressesOf(facts.get('mv0'))).toContain('198.18.3.1/24 global');
      expect(addressesOf(facts.get('vx0'))).toContain('198.18.4.1/24 global');
      expect(addressesOf(facts.get('down0'))).toEqual(['198.18.5.1/24 global']);
      expect(addressesOf(facts.get('tun0'))).toEqual([]);
      // Without ip only Node's view remains, and Node cannot see a down interface's address.
      expect(addressesOf(byName(withoutIp.facts).get('down0'))).toEqual([]);
      expect(addressesOf(byName(withoutIp.facts).get('data0'))).toContain('198.18.1.1/24 global');
    });

    it('carries the routing table from /proc, with or without ip', () => {
      const line = (r: HostFacts['routes'][number]) =>
        `${r.type} ${r.destination}/${r.prefixLength} ${r.interface}`;
      // /proc/net/route holds the main table only; ipv6_route holds them all.
      const expected = [
        'unicast 198.18.1.0/24 data0',
        'unicast 198.18.2.0/24 br0',
        'unicast 2001:db8:1::/64 data0',
        'local 2001:db8:1::1/128 data0',
      ];
      for (const { facts } of [withIp, withoutIp]) {
        const routes = facts.routes.map(line);
        expect(routes).toEqual(expect.arrayContaining(expected));
        expect(routes.filter((route) => route.startsWith('local 198.18.'))).toEqual([]);
      }
    });
  },
);

const VETH_PAIRS = 250;

tier(`readHostFacts with ${VETH_PAIRS * 2} veth interfaces`, netnsUnavailable, () => {
  const lab = new Lab('hp');

  afterAll(() => lab.cleanup());

  // How long this takes is measured by scripts/bench-host.js, not asserted here.
  it('lists every one of them', async () => {
    await lab.host('big');
    const batch = Array.from(
      { length: VETH_PAIRS },
      (_, i) => `link add va${i} type veth peer name vb${i}\n`,
    ).join('');
    await execa('ip', ['-n', lab.ns('big'), '-batch', '-'], { input: batch });
    const script = `
import { readHostFacts } from ${JSON.stringify(MODULE)};
const facts = await readHostFacts();
console.log(JSON.stringify(facts.interfaces.map((iface) => [iface.name, iface.kind])));
`;
    const run = await lab.exec(
      'big',
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { timeout: 60_000 },
    );
    const listed = new Map(JSON.parse(String(run.stdout)) as [string, string][]);
    expect(listed.size).toBe(VETH_PAIRS * 2 + 1);
    expect(listed.get('lo')).toBe('loopback');
    expect(listed.get(`va${VETH_PAIRS - 1}`)).toBe('veth');
    expect(listed.get(`vb${VETH_PAIRS - 1}`)).toBe('veth');
  });
});
