/**
 * readHostFactsFrom over a fixture sysfs/procfs tree laid out as the kernel
 * lays it out (class/net/IF → ../../devices/.../net/IF, `device`, `master`
 * and class/infiniband/DEV/device links), for what this machine cannot show
 * for real: bonds, InfiniBand, RDMA ports, unreadable attributes.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { NetworkInterfaceInfo } from 'node:os';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostFacts } from '../../src/host/host-facts.js';
import { addressesHiddenFromNode, readHostFactsFrom } from '../../src/host/read-host-facts.js';
import { routeTo } from '../../src/host/routes.js';
import { readSysfsNames } from '../../src/host/sysfs-interface.js';

let root: string;

function file(path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

function link(path: string, target: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  symlinkSync(target, join(root, path));
}

/** A netdev under devices/PARENT/net/NAME, linked from class/net/NAME. */
function netdev(parent: string, name: string, attributes: Record<string, string>): string {
  const dir = `sys/devices/${parent}/net/${name}`;
  mkdirSync(join(root, dir), { recursive: true });
  for (const [attribute, value] of Object.entries(attributes))
    file(`${dir}/${attribute}`, `${value}\n`);
  link(`sys/class/net/${name}`, `../../devices/${parent}/net/${name}`);
  return dir;
}

const ether = (index: number, extra: Record<string, string> = {}) => ({
  type: '1',
  ifindex: String(index),
  iflink: String(index),
  mtu: '1500',
  operstate: 'up',
  carrier: '1',
  uevent: `INTERFACE=x\nIFINDEX=${index}`,
  ...extra,
});

function info(address: string, prefixLength: number): NetworkInterfaceInfo {
  const family = address.includes(':') ? 'IPv6' : 'IPv4';
  const base = {
    address,
    netmask: '',
    mac: '00:00:00:00:00:00',
    internal: false,
    cidr: `${address}/${prefixLength}`,
  };
  return family === 'IPv6' ? { ...base, family, scopeid: 0 } : { ...base, family };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'ncr-sysfs-'));
  // lo: ARPHRD_LOOPBACK; speed fails with EINVAL on lo (a directory stands in for an unreadable file).
  netdev('virtual', 'lo', { ...ether(1, { type: '772', operstate: 'unknown', mtu: '65536' }) });
  mkdirSync(join(root, 'sys/devices/virtual/net/lo/speed'));

  // eth0: a RoCE NIC at 25 Gb/s, behind mlx5_0 port 1.
  const eth0 = netdev(
    'pci0000:00/0000:3b:00.0',
    'eth0',
    ether(2, { speed: '25000', mtu: '9000', dev_port: '0' }),
  );
  link(`${eth0}/device`, '../../../0000:3b:00.0');
  link('sys/class/infiniband/mlx5_0', '../../devices/pci0000:00/0000:3b:00.0/infiniband/mlx5_0');
  link('sys/devices/pci0000:00/0000:3b:00.0/infiniband/mlx5_0/device', '../../../0000:3b:00.0');
  file('sys/devices/pci0000:00/0000:3b:00.0/infiniband/mlx5_0/ports/1/state', '4: ACTIVE\n');
  file('sys/devices/pci0000:00/0000:3b:00.0/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0', 'eth0\n');

  // bond0 over eth1 + eth2 (bonding/ on the bond, bonding_slave/ and master on each member).
  netdev(
    'virtual',
    'bond0',
    ether(5, { speed: '200000', uevent: 'DEVTYPE=bond\nINTERFACE=bond0\nIFINDEX=5' }),
  );
  mkdirSync(join(root, 'sys/devices/virtual/net/bond0/bonding'));
  for (const [index, name, pci] of [
    [3, 'eth1', '0000:5e:00.0'],
    [4, 'eth2', '0000:5e:00.1'],
  ] as const) {
    const dir = netdev(`pci0000:00/${pci}`, name, ether(index, { speed: '100000' }));
    link(`${dir}/device`, `../../../${pci}`);
    mkdirSync(join(root, dir, 'bonding_slave'));
    link(`${dir}/master`, '../../../../virtual/net/bond0');
  }

  // ib0: IPoIB on port 2 of a two-port mlx4 (dev_port is 0-based), port 1 down.
  const ib0 = netdev(
    'pci0000:00/0000:af:00.0',
    'ib0',
    ether(6, { type: '32', mtu: '2044', speed: '100000', dev_port: '1' }),
  );
  link(`${ib0}/device`, '../../../0000:af:00.0');
  link('sys/class/infiniband/mlx4_0', '../../devices/pci0000:00/0000:af:00.0/infiniband/mlx4_0');
  link('sys/devices/pci0000:00/0000:af:00.0/infiniband/mlx4_0/device', '../../../0000:af:00.0');
  file('sys/devices/pci0000:00/0000:af:00.0/infiniband/mlx4_0/ports/1/state', '1: DOWN\n');
  file('sys/devices/pci0000:00/0000:af:00.0/infiniband/mlx4_0/ports/2/state', '4: ACTIVE\n');

  // docker0: a bridge without ports: down, SPEED_UNKNOWN (-1), carrier unreadable.
  netdev(
    'virtual',
    'docker0',
    ether(7, { operstate: 'down', speed: '-1', uevent: 'DEVTYPE=bridge\nINTERFACE=docker0' }),
  );
  mkdirSync(join(root, 'sys/devices/virtual/net/docker0/bridge'));
  rmSync(join(root, 'sys/devices/virtual/net/docker0/carrier'));
  mkdirSync(join(root, 'sys/devices/virtual/net/docker0/carrier'));

  // weird0: a directory with nothing readable in it.
  mkdirSync(join(root, 'sys/devices/virtual/net/weird0'), { recursive: true });
  link('sys/class/net/weird0', '../../devices/virtual/net/weird0');

  file(
    'proc/net/route',
    [
      'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT',
      'eth0\t000A12C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0',
      'bond0\t007100CB\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0',
      'bond0\t00000000\t017100CB\t0003\t0\t0\t0\t00000000\t0\t0\t0',
      '',
    ].join('\n'),
  );
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

async function readFixture(
  osInterfaces: NodeJS.Dict<NetworkInterfaceInfo[]>,
  sysRoot = join(root, 'sys'),
): Promise<HostFacts> {
  return readHostFactsFrom({
    sysRoot,
    procRoot: join(root, 'proc'),
    ip: 'never',
    hostname: 'node01',
    osInterfaces,
  });
}

const osInterfaces = {
  lo: [
    { ...info('127.0.0.1', 8), internal: true },
    { ...info('::1', 128), internal: true },
  ],
  eth0: [info('198.18.10.5', 24), info('fe80::1', 64)],
  bond0: [info('203.0.113.5', 24)],
  // Known to Node but absent from /sys (an interface that vanished between the two reads).
  ghost0: [info('198.19.0.9', 16)],
};

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
    // Node's order, which is getifaddrs' (the kernel's): no ifindex to sort by.
    expect(facts.interfaces.map((iface) => [iface.name, iface.kind, iface.operstate])).toEqual(
      Object.keys(osInterfaces).map((name) => [name, 'other-virtual', null]),
    );
  });
});

describe('routeTo over the fixture /proc (live, without iproute2)', () => {
  it("matches the longest prefix, answers this host's addresses as local, and leaves out the unroutable", async () => {
    const facts = await readFixture(osInterfaces);
    const answers = await routeTo(
      ['198.18.10.9', '192.0.2.1', '198.18.10.5', '2001:db8::1'],
      facts,
      true,
      {
        ip: false,
        procRoot: join(root, 'proc'),
      },
    );
    expect(answers).toEqual([
      {
        destination: '198.18.10.9',
        interface: 'eth0',
        source: '198.18.10.5',
        gateway: null,
        type: 'unicast',
      },
      {
        destination: '192.0.2.1',
        interface: 'bond0',
        source: '203.0.113.5',
        gateway: '203.0.113.1',
        type: 'unicast',
      },
      {
        destination: '198.18.10.5',
        interface: 'eth0',
        source: '198.18.10.5',
        gateway: null,
        type: 'local',
      },
    ]);
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
    file(`${name}/net/fib_trie`, trie.join('\n'));
    file(`${name}/net/if_inet6`, inet6.map((line) => `${line}\n`).join(''));
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
