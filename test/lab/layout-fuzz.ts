/**
 * Seeded host layouts for the differential fuzz against the real NCCL
 * (issue 38, test/lab/nccl-fuzz.ts): the vocabulary users' hosts have, drawn
 * by a seeded generator so that a seed names the same layouts on every
 * machine, and a mismatch can be replayed and copied into the hand-written
 * fixtures (ORACLE_LAYOUTS in nccl-oracle.ts, whose HostSpec this is).
 *
 * - names: eth/ens/eno/enp/ib/hsn NICs, a bond-named bridge, docker0,
 *   virbr0, br-*, cni0, lxcbr0, veth and cali* host ends, tun0, and EKS's
 *   pod-id-link0 with its 169.254.170.x/32;
 * - states: up, admin-down, up without carrier (a veth whose far end is
 *   down, a bridge without a port, a tun with no process);
 * - addresses: IPv4, IPv6, both, two of one family, or none but the
 *   kernel's own link-local (an up veth with carrier gets one);
 * - the master on one of the host's networks, beyond a default route, on an
 *   IPv6 network, or where no route leads;
 * - the hostname in /etc/hosts on one of the host's addresses, Debian's
 *   127.0.1.1, or absent (what Gloo resolves);
 * - a user's NCCL_SOCKET_IFNAME from the spellings users write, at times with
 *   a NCCL_SOCKET_FAMILY; at times an NCCL_COMM_ID; for an IPv6 master, a
 *   one-character value beside nccl-run's own NCCL_SOCKET_FAMILY=AF_INET6;
 * - at times a down NIC first in kernel order.
 *
 * Only documentation and benchmarking ranges (198.18.0.0/15, 2001:db8::/32),
 * and 169.254.170.0/24 inside the namespace, as EKS has it.
 */
import type { HostSpec, NicSpec } from './nccl-oracle.js';

/** mulberry32: a small seeded generator; the same seed gives the same numbers everywhere. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FuzzLayout {
  /** `s<seed>-<index>`: enough to replay it (`npm run fuzz:nccl -- --seed S --layouts index+1`). */
  id: string;
  spec: HostSpec;
  /** torchrun's --master_addr: an address literal, so that only the host's own name goes through /etc/hosts. */
  master: string;
  /** Where the master lies, for the report. */
  placement: 'local' | 'local-ipv6' | 'routed' | 'nowhere';
  /** The user's NCCL settings tried on this layout (NCCL_SOCKET_IFNAME, at times with NCCL_SOCKET_FAMILY). */
  kept: Record<string, string>[];
  /** A user's GLOO_SOCKET_IFNAME tried on this layout: one of its names, or one it lacks. */
  gloo: string;
}

type Rng = () => number;

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
const chance = (rng: Rng, p: number) => rng() < p;
const hex = (rng: Rng, digits: number) =>
  Array.from({ length: digits }, () => Math.floor(rng() * 16).toString(16)).join('');

/** The names a node's interfaces have, by kind; a layout takes 2 to 5 of them. */
const NAMES: { kind: 'nic' | 'bridge' | 'veth' | 'tun' | 'pod-id'; name: (rng: Rng) => string }[] =
  [
    { kind: 'nic', name: () => 'eth0' },
    { kind: 'nic', name: () => 'eth1' },
    { kind: 'nic', name: () => 'eth10' },
    { kind: 'nic', name: () => 'ens1f0' },
    { kind: 'nic', name: () => 'ens1f1' },
    { kind: 'nic', name: () => 'eno1' },
    { kind: 'nic', name: () => 'enp65s0f0' },
    { kind: 'nic', name: () => 'ib0' },
    { kind: 'nic', name: () => 'hsn0' },
    { kind: 'bridge', name: () => 'bond0' },
    { kind: 'bridge', name: () => 'docker0' },
    { kind: 'bridge', name: () => 'virbr0' },
    { kind: 'bridge', name: (rng) => `br-${hex(rng, 8)}` },
    { kind: 'bridge', name: () => 'cni0' },
    { kind: 'bridge', name: () => 'lxcbr0' },
    { kind: 'veth', name: (rng) => `veth${hex(rng, 7)}` },
    { kind: 'veth', name: (rng) => `cali${hex(rng, 8)}` },
    { kind: 'tun', name: () => 'tun0' },
    { kind: 'pod-id', name: () => 'pod-id-link0' },
  ];

/** Spellings of NCCL_SOCKET_IFNAME seen in users' scripts and images. */
const SPELLINGS = [
  '^docker,lo',
  '^docker0,lo',
  '^=docker0,lo',
  '^lo',
  '^docker,lo,virbr',
  'eth',
  'en',
  'ib',
  'e',
  '=eth1',
  'eth0,eth1',
  'ens,eth',
  '^',
  '=',
];

/** One layout, the index-th of the seed's sequence (each layout draws from its own generator). */
export function generateLayout(seed: number, index: number): FuzzLayout {
  const rng = seededRandom((seed * 7919 + index * 104729) >>> 0);
  const count = 2 + Math.floor(rng() * 4);
  const nics: NicSpec[] = [];
  const used = new Set<string>();
  const nicNames = new Set<string>();
  // Distinct /24s and /64s within the layout: 198.18.<net>.0/24, 2001:db8:<net>::/64.
  const nets = shuffle(
    rng,
    Array.from({ length: 200 }, (_, i) => i + 1),
  );
  const v4 = new Map<string, number>();
  const v6 = new Map<string, number>();
  while (nics.length < count) {
    // Half the draws are a NIC, as most of a node's interfaces are.
    const entry = pick(rng, chance(rng, 0.5) ? NAMES.filter((n) => n.kind === 'nic') : NAMES);
    const name = entry.name(rng);
    if (used.has(name)) continue;
    used.add(name);
    if (entry.kind === 'nic') nicNames.add(name);
    if (entry.kind === 'pod-id') {
      nics.push({ name, addresses: [`169.254.170.${2 + Math.floor(rng() * 250)}/32`] });
      continue;
    }
    const nic: NicSpec = { name };
    if (entry.kind === 'bridge') {
      nic.kind = 'bridge';
      if (chance(rng, 0.35)) nic.carrier = false;
      else nic.port = `veth${hex(rng, 7)}`;
    } else if (entry.kind === 'tun') {
      nic.kind = 'tun';
    } else if (chance(rng, 0.12)) {
      nic.carrier = false;
    }
    const host = 2 + Math.floor(rng() * 200);
    const addresses: string[] = [];
    const shape = rng();
    const addV4 = () => {
      const net = nets.pop() as number;
      if (!v4.has(name)) v4.set(name, net);
      addresses.push(`198.18.${net}.${host}/24`);
    };
    const addV6 = () => {
      const net = nets.pop() as number;
      if (!v6.has(name)) v6.set(name, net);
      addresses.push(`2001:db8:${net.toString(16)}::${host.toString(16)}/64`);
    };
    if (shape < 0.35) addV4();
    else if (shape < 0.5) addV6();
    else if (shape < 0.75) {
      addV4();
      addV6();
    } else if (shape < 0.83) {
      addV4();
      addV4();
    } else if (shape < 0.88) {
      addV6();
      addV6();
    }
    // else: none but the kernel's link-local, where the link comes up with carrier.
    if (addresses.length > 0) nic.addresses = addresses;
    if (chance(rng, 0.1)) nic.down = true;
    nics.push(nic);
  }

  const hostAddresses = nics.flatMap((nic) =>
    (nic.addresses ?? []).filter((cidr) => !cidr.startsWith('169.254.')).map(withoutPrefix),
  );
  const named = rng();
  const own =
    named < 0.5 && hostAddresses.length > 0
      ? pick(rng, hostAddresses)
      : named < 0.8
        ? '127.0.1.1'
        : null;
  const etcHosts = [
    '127.0.0.1 localhost',
    '::1 localhost',
    ...(own === null ? [] : [`${own} node1`]),
    '',
  ].join('\n');

  // The master: mostly on a working NIC's network, as a job that can run has it; else anywhere.
  const working = (nic: NicSpec) =>
    nicNames.has(nic.name) && nic.down !== true && nic.carrier !== false;
  const among = (nets: Map<string, number>) => {
    const good = nics.filter((nic) => working(nic) && nets.has(nic.name));
    const from = good.length > 0 && chance(rng, 0.75) ? good : nics.filter((n) => nets.has(n.name));
    return from.map((nic) => nets.get(nic.name) as number);
  };
  // The routes go on interfaces that are administratively up.
  const upV4 = nics.filter((nic) => nic.down !== true && v4.has(nic.name));
  const upV6 = nics.filter((nic) => nic.down !== true && v6.has(nic.name));
  const where = rng();
  let master = '198.19.250.10';
  let placement: FuzzLayout['placement'] = 'nowhere';
  const routes: string[][] = [];
  if (where < 0.45 && v4.size > 0) {
    master = `198.18.${pick(rng, among(v4))}.1`;
    placement = 'local';
  } else if (where < 0.6 && v6.size > 0) {
    master = `2001:db8:${pick(rng, among(v6)).toString(16)}::1`;
    placement = 'local-ipv6';
  } else if (where < 0.92 && upV4.length > 0) {
    const good = upV4.filter(working);
    const via = pick(rng, good.length > 0 && chance(rng, 0.75) ? good : upV4);
    routes.push(['default', 'via', `198.18.${v4.get(via.name)}.1`, 'dev', via.name]);
    master = `198.19.${1 + Math.floor(rng() * 200)}.10`;
    placement = 'routed';
  } else if (upV6.length > 0 && chance(rng, 0.5)) {
    const via = pick(rng, upV6);
    routes.push([
      'default',
      'via',
      `2001:db8:${(v6.get(via.name) as number).toString(16)}::1`,
      'dev',
      via.name,
    ]);
    master = '2001:db8:ffff::10';
    placement = 'routed';
  }

  const names = nics.map((nic) => nic.name);
  const fromLayout = [
    `=${pick(rng, names)}`,
    pick(rng, names).slice(0, 2 + Math.floor(rng() * 2)),
    `^${pick(rng, names)}`,
    `${pick(rng, names)},${pick(rng, names)}`,
  ];
  const spellings = [
    ...new Set([
      pick(rng, SPELLINGS),
      pick(rng, fromLayout),
      pick(rng, [...SPELLINGS, ...fromLayout]),
    ]),
  ];
  const kept: Record<string, string>[] = spellings.map((value) => ({ NCCL_SOCKET_IFNAME: value }));
  // A family forced or misspelt (NCCL reads exactly AF_INET and AF_INET6), alone or with a list.
  if (chance(rng, 0.4)) {
    const family = pick(rng, ['AF_INET6', 'AF_INET6', 'AF_INET', 'INET6']);
    kept.push(
      chance(rng, 0.5)
        ? { NCCL_SOCKET_FAMILY: family }
        : { NCCL_SOCKET_IFNAME: pick(rng, spellings), NCCL_SOCKET_FAMILY: family },
    );
  }
  // NCCL_COMM_ID as scripts from before torchrun set it: the master's address, another network's, or none of the host's.
  if (chance(rng, 0.3)) {
    const meets = pick(rng, [
      master,
      ...[...v4.values()].map((net) => `198.18.${net}.1`),
      '198.19.77.7',
    ]);
    kept.push({ NCCL_COMM_ID: meets.includes(':') ? `[${meets}]:29600` : `${meets}:29600` });
  }
  const gloo = chance(rng, 0.8) ? pick(rng, names) : pick(rng, ['eth9', 'ens9f0', 'ib1']);
  // Drawn after every earlier draw, so that a seed's earlier layouts stay as they were (issue 42).
  // A one-character NCCL_SOCKET_IFNAME, which NCCL ignores (strlen > 1), kept beside the
  // NCCL_SOCKET_FAMILY=AF_INET6 nccl-run exports for an IPv6 master.
  if (master.includes(':') && chance(rng, 0.6)) {
    kept.push({ NCCL_SOCKET_IFNAME: pick(rng, ['e', 'i', 'b', '^']) });
  }
  // A NIC that is down first in kernel order (2.18-2.27 take its IPv4 address; 2.28 skip it).
  if (chance(rng, 0.25)) {
    const name = ['eno2', 'eth2', 'ens2f0'].find((candidate) => !used.has(candidate)) as string;
    const net = nets.pop() as number;
    nics.unshift({ name, addresses: [`198.18.${net}.9/24`], down: true });
  }
  return {
    id: `s${seed}-${index}`,
    spec: { hostname: 'node1', nics, ...(routes.length > 0 ? { routes } : {}), etcHosts },
    master,
    placement,
    kept,
    gloo,
  };
}

function shuffle<T>(rng: Rng, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

function withoutPrefix(cidr: string): string {
  return cidr.slice(0, cidr.indexOf('/'));
}
