/**
 * readHostFactsFrom over a fixture sysfs/procfs tree laid out as the kernel
 * lays it out (class/net/IF → ../../devices/.../net/IF, `device`, `master`
 * and class/infiniband/DEV/device links), for what this machine cannot show
 * for real: bonds, InfiniBand, RDMA ports, unreadable attributes.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressesHiddenFromNode, readHostFactsFrom } from '../../../src/host/read-host-facts.js';
import { readSysfsNames } from '../../../src/host/sysfs-interface.js';
import { buildSysfsTree, osInterfaces, readFixture, treeFile } from '../../fixtures/sysfs-tree.js';

let root: string;
beforeAll(() => {
  root = buildSysfsTree();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('readHostFactsFrom over a fixture tree', () => {
  it('lists every interface in /sys, by ifindex, addressless ones included', async () => {
    const facts = await readFixture(osInterfaces);
    expect(facts.hostname).toBe('node01');
    expect(facts.interfaces.map((iface) => iface.name)).toEqual([
      'lo',
      'eth0',
      'eth1',
      'eth2',
      'bond0',
      'ib0',
      'docker0',
      // Without an ifindex: in the order found, sysfs's names before the ones only Node knows.
      'weird0',
      'ghost0',
    ]);
  });

  it('reads a physical RoCE NIC with its addresses, speed, MTU and RDMA port', async () => {
    const facts = await readFixture(osInterfaces);
    expect(facts.interfaces.find((iface) => iface.name === 'eth0')).toEqual({
      name: 'eth0',
      operstate: 'up',
      carrier: true,
      addresses: [
        { address: '198.18.10.5', family: 'ipv4', prefixLength: 24, scope: 'global' },
        { address: 'fe80::1', family: 'ipv6', prefixLength: 64, scope: 'link' },
      ],
      speedMbps: 25000,
      mtu: 9000,
      kind: 'physical',
      master: null,
      rdma: { device: 'mlx5_0', port: 1, state: 'ACTIVE' },
    });
  });

  it("tells a bond from its members, and names the members' master", async () => {
    const facts = await readFixture(osInterfaces);
    const byName = new Map(facts.interfaces.map((iface) => [iface.name, iface]));
    expect(byName.get('bond0')).toMatchObject({ kind: 'bond', master: null, speedMbps: 200000 });
    expect(byName.get('eth1')).toMatchObject({
      kind: 'bond-member',
      master: 'bond0',
      addresses: [],
    });
    expect(byName.get('eth2')).toMatchObject({ kind: 'bond-member', master: 'bond0' });
  });

  it('maps an IPoIB port by dev_port on a two-port HCA', async () => {
    const facts = await readFixture(osInterfaces);
    expect(facts.interfaces.find((iface) => iface.name === 'ib0')).toMatchObject({
      kind: 'infiniband',
      mtu: 2044,
      rdma: { device: 'mlx4_0', port: 2, state: 'ACTIVE' },
    });
  });

  it('reads unknown and unreadable attributes as null, never failing', async () => {
    const facts = await readFixture(osInterfaces);
    const byName = new Map(facts.interfaces.map((iface) => [iface.name, iface]));
    expect(byName.get('lo')).toMatchObject({
      kind: 'loopback',
      speedMbps: null,
      operstate: 'unknown',
    });
    expect(byName.get('docker0')).toMatchObject({
      kind: 'bridge',
      operstate: 'down',
      carrier: null,
      speedMbps: null,
    });
    expect(byName.get('weird0')).toEqual({
      name: 'weird0',
      operstate: null,
      carrier: null,
      addresses: [],
      speedMbps: null,
      mtu: null,
      kind: 'other-virtual',
      master: null,
      rdma: null,
    });
    expect(byName.get('ghost0')).toMatchObject({
      operstate: null,
      addresses: [{ address: '198.19.0.9', prefixLength: 16 }],
    });
  });

  it('reads the routing table from /proc when iproute2 is not asked', async () => {
    const facts = await readFixture(osInterfaces);
    expect(
      facts.routes.map(
        (entry) => `${entry.destination}/${entry.prefixLength} ${entry.interface} ${entry.gateway}`,
      ),
    ).toEqual([
      '198.18.10.0/24 eth0 null',
      '203.0.113.0/24 bond0 null',
      '0.0.0.0/0 bond0 203.0.113.1',
    ]);
  });

  it("still answers with Node's view when /sys and /proc are missing", async () => {
    const facts = await readHostFactsFrom({
      sysRoot: join(root, 'no-sys'),
      procRoot: join(root, 'no-proc'),
      ip: 'never',
      hostname: 'node01',
      osInterfaces,
    });
    expect(facts.routes).toEqual([]);
    // Node's order, which is getifaddrs' (the kernel's): no ifindex to sort by; lo by its 127.0.0.1.
    expect(facts.interfaces.map((iface) => [iface.name, iface.kind, iface.operstate])).toEqual(
      Object.keys(osInterfaces).map((name) => [
        name,
        name === 'lo' ? 'loopback' : 'other-virtual',
        null,
      ]),
    );
  });
});

describe('addressesHiddenFromNode: when `ip -d addr show` is asked (the host decides, not the command)', () => {
  const names = () => readSysfsNames(join(root, 'sys'));
  const upOnly = ['lo', 'eth0', 'eth1', 'eth2', 'bond0', 'ib0'];
  const sys = () => join(root, 'sys');

  /** A /proc of its own: fib_trie as fib_trie_seq_show prints it, with LOCAL leaves `locals`, and if_inet6 lines. */
  function procWith(name: string, locals: string[], inet6: string[]): string {
    const leaves = locals.flatMap((address) => [`     |-- ${address}`, '        /32 host LOCAL']);
    const trie = [
      'Main:',
      '  +-- 0.0.0.0/0 3 0 5',
      '     |-- 0.0.0.0',
      '        /0 universe UNICAST',
      '     |-- 127.0.0.0',
      '        /8 host LOCAL',
      ...leaves,
      '     |-- 198.18.10.255',
      '        /32 link BROADCAST',
      'Local:',
      ...leaves,
      '',
    ];
    treeFile(`${name}/net/fib_trie`, trie.join('\n'));
    treeFile(`${name}/net/if_inet6`, inet6.map((line) => `${line}\n`).join(''));
    return join(root, name);
  }
  const nodeLocals = ['127.0.0.1', '198.18.10.5', '203.0.113.5', '198.19.0.9'];
  const nodeInet6 = [
    '00000000000000000000000000000001 01 80 10 80       lo',
    'fe800000000000000000000000000001 02 40 20 80     eth0',
  ];

  it('asks for docker0 where /proc cannot tell: down, so Node cannot list what it holds', () => {
    expect(addressesHiddenFromNode(sys(), join(root, 'proc'), names(), osInterfaces)).toBe(true);
  });

  it('asks nothing for docker0 when /proc shows it holding no address', () => {
    const proc = procWith('proc-quiet', nodeLocals, nodeInet6);
    expect(addressesHiddenFromNode(sys(), proc, names(), osInterfaces)).toBe(false);
  });

  it('asks for an IPv4 address with a local route that Node does not list', () => {
    const proc = procWith('proc-v4', [...nodeLocals, '198.18.99.1'], nodeInet6);
    expect(addressesHiddenFromNode(sys(), proc, names(), osInterfaces)).toBe(true);
  });

  it('asks for an IPv6 address on the down link', () => {
    const proc = procWith('proc-v6', nodeLocals, [
      ...nodeInet6,
      '20010db8000000000000000000000007 07 40 00 80  docker0',
    ]);
    expect(addressesHiddenFromNode(sys(), proc, names(), osInterfaces)).toBe(true);
  });

  it('asks nothing for running links Node lacks (bond members, an IPoIB port without an address)', () => {
    const running = names().filter((name) => upOnly.includes(name));
    expect(addressesHiddenFromNode(sys(), join(root, 'proc'), running, osInterfaces)).toBe(false);
  });

  it('asks for a link whose operstate cannot be read', () => {
    expect(addressesHiddenFromNode(sys(), join(root, 'proc'), ['weird0'], osInterfaces)).toBe(true);
  });

  it('asks where there is no sysfs to tell from', () => {
    expect(
      addressesHiddenFromNode(join(root, 'nothing'), join(root, 'proc'), [], osInterfaces),
    ).toBe(true);
  });
});

// Issue 42: a bare chroot has no /sys. The real /proc and Node's own list still show lo's
// 127.0.0.1, and the facts say what they could not read instead of "no loopback interface".
describe('readHostFactsFrom without /sys (a bare chroot)', () => {
  it('still knows lo as the loopback, and names /sys/class/net as unread', async () => {
    const facts = await readHostFactsFrom({
      sysRoot: join(root, 'no-such-sys'),
      procRoot: join(root, 'no-such-proc'),
      ip: 'never',
      hostname: 'chroot',
      osInterfaces: {
        lo: [
          {
            address: '127.0.0.1',
            netmask: '255.0.0.0',
            family: 'IPv4',
            mac: '00:00:00:00:00:00',
            internal: true,
            cidr: '127.0.0.1/8',
          },
        ],
      },
    });
    expect(facts.interfaces).toMatchObject([{ name: 'lo', kind: 'loopback' }]);
    expect(facts.unread).toEqual([join(root, 'no-such-sys', 'class/net')]);
  });
});
