/**
 * The real NCCL as an oracle (issue 9, shared/LAB.md): on a namespaced lab
 * host, NCCL 2.22 from the Debian 13 root picks its bootstrap interface for a
 * given environment, and prints it, without a GPU. `ncclGetUniqueId` runs
 * bootstrapNetInit (src/bootstrap.cc at v2.22.3-1), which calls
 * ncclFindInterfaces (src/misc/socket.cc) with maxIfs 1, the same selection
 * NCCL's socket transport makes, and logs
 *
 *   NCCL INFO Bootstrap : Using eth1:198.18.2.2<0>      (2.28+: "Bootstrap: Using")
 *   NCCL WARN Bootstrap : no socket interface found
 *   NCCL WARN NET/Socket : No usable listening interface found   (NCCL_COMM_ID matched no subnet)
 *
 * The line comes before NCCL binds, so a pick it cannot bind (a down NIC, a
 * link-local address) is still reported as the pick.
 *
 * Hosts are built from a small description: interfaces in creation order,
 * which is the kernel's (ifindex) order and so getifaddrs' order; addresses
 * in the order given, which the kernel keeps for IPv4 and, within a scope,
 * reverses for IPv6 (newest first). Every veth's peer end lives in one
 * "wire" namespace, so a lab host holds only the interfaces its layout names.
 */
import { copyFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { ncclBehaviour } from '../../src/nccl/behaviour.js';
import { CHECKOUT, inRoot } from './debian-root.js';
import type { Lab } from './netns.js';

export interface NicSpec {
  name: string;
  /** veth (default), a bridge with a port attached (running), or a tun with no process (no carrier). */
  kind?: 'veth' | 'bridge' | 'tun';
  /**
   * A veth whose far end is down, or a bridge with no port: up, but no
   * carrier (not IFF_RUNNING). Default true for veths and bridges.
   */
  carrier?: boolean;
  /** The name of a bridge's port in the host (default the bridge's name and `p`), as docker's vethXXXX. */
  port?: string;
  /** CIDRs, in the order they are added. */
  addresses?: string[];
  /** Admin-down after its addresses are added (IPv4 addresses stay; IPv6 ones go). */
  down?: boolean;
}

export interface HostSpec {
  hostname: string;
  nics: NicSpec[];
  /** Routes, as `ip route add` arguments. */
  routes?: string[][];
  /** The host's /etc/hosts. */
  etcHosts: string;
}

/** An interface and the address bound on it; null when NCCL found no interface. */
export type Bind = { interface: string; address: string } | null;

export interface NcclRun {
  bind: Bind;
  /** NCCL's own log lines, for a failing assertion's message. */
  log: string;
}

const STEP_TIMEOUT_MS = 10_000;
const WIRE = 'wire';

let wireCount = 0;

/** The namespace that holds every veth's far end; make it once per Lab. */
export async function addWire(lab: Lab): Promise<void> {
  await lab.host(WIRE);
}

/** Builds one host of the description in `lab` (which has a wire, addWire). */
export async function buildHost(lab: Lab, host: string, spec: HostSpec): Promise<void> {
  await lab.host(host, spec.etcHosts);
  for (const nic of spec.nics) {
    const kind = nic.kind ?? 'veth';
    if (kind === 'veth') {
      const far = wireEnd();
      await lab.link(host, nic.name, WIRE, far);
      if (nic.carrier === false) await lab.ip(WIRE, 'link', 'set', far, 'down');
    } else if (kind === 'bridge') {
      // A bridge without a port reports no carrier; docker's and libvirt's have one per container or VM.
      await lab.ip(host, 'link', 'add', nic.name, 'type', 'bridge');
      await lab.ip(host, 'link', 'set', nic.name, 'up');
      if (nic.carrier !== false) {
        const port = nic.port ?? `${nic.name.slice(0, 11)}p`;
        await lab.link(host, port, WIRE, wireEnd());
        await lab.ip(host, 'link', 'set', port, 'master', nic.name);
      }
    } else {
      await lab.ip(host, 'tuntap', 'add', 'dev', nic.name, 'mode', 'tun');
      await lab.ip(host, 'link', 'set', nic.name, 'up');
    }
    for (const cidr of nic.addresses ?? []) await lab.addr(host, nic.name, cidr);
    if (nic.down === true) await lab.ip(host, 'link', 'set', nic.name, 'down');
  }
  for (const route of spec.routes ?? []) await lab.ip(host, 'route', 'add', ...route);
}

function wireEnd(): string {
  wireCount += 1;
  return `w${process.pid % 10000}x${wireCount}`;
}

/**
 * NCCL's bootstrap pick on `host` with exactly `env` (plus NCCL_DEBUG=INFO),
 * run in the Debian root `root`, whose libnccl2 is `nccl` (X.Y.Z), as
 * python3 + ctypes; its log line is read as that version's record says it
 * prints it. `home` is the content of root's ~/.nccl.conf for this call, or
 * none.
 */
export async function ncclBootstrap(
  lab: Pick<Lab, 'ns'>,
  host: string,
  root: string,
  nccl: string,
  env: Readonly<Record<string, string>>,
  home?: string,
): Promise<NcclRun> {
  const vars = Object.entries({ ...env, NCCL_DEBUG: 'INFO' }).map(([k, v]) => `${k}=${v}`);
  const argv = [
    'ip',
    'netns',
    'exec',
    lab.ns(host),
    ...inRoot(root, 'ncclprobe', '/usr/bin/env', ['-i', ...vars, '/usr/bin/python3', '-c', PROBE]),
  ];
  const [command, ...args] = withHome(home, root, argv);
  const run = await execa(command as string, args, {
    reject: false,
    all: true,
    timeout: STEP_TIMEOUT_MS,
    extendEnv: false,
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
  });
  const log = String(run.all ?? '');
  return { bind: parseBootstrapLine(log, ncclBehaviour(nccl).bootstrapLog), log };
}

/**
 * argv run with `home` as ~/.nccl.conf of root (uid 0) in the tree at `root`
 * ('' for this machine's own): a tmpfs over ROOT/root in a private mount
 * namespace, so neither the machine's home nor the cached Debian root is
 * touched. `ip netns exec` and the chroot inherit the mount.
 */
export function withHome(home: string | undefined, root: string, argv: string[]): string[] {
  if (home === undefined) return argv;
  const script = `mount -t tmpfs nccl-home "$1/root" && printf '%s' "$2" > "$1/root/.nccl.conf" && shift 2 && exec "$@"`;
  return [
    'unshare',
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    script,
    'sh',
    root,
    home,
    ...argv,
  ];
}

export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * The built nccl-run (`build`, snapshotBuild) on `host`, as a user there would run it: its own
 * hostname, the host's /etc/hosts, nothing in its environment but `env` and
 * PATH, in an empty folder (no ./nccl-run.env), with `home` as ~/.nccl.conf.
 */
export async function runNcclRun(
  build: string,
  lab: Lab,
  host: string,
  hostname: string,
  env: Readonly<Record<string, string>>,
  argv: readonly string[],
  home?: string,
): Promise<CliRun> {
  const inHost = [
    'ip',
    'netns',
    'exec',
    lab.ns(host),
    ...inRoot('/', hostname, process.execPath, ['--', build, ...argv]),
  ];
  const [command, ...args] = withHome(home, '', inHost);
  const run = await execa(command as string, args, {
    reject: false,
    timeout: STEP_TIMEOUT_MS,
    extendEnv: false,
    env: {
      PATH: `${dirname(process.execPath)}:/usr/sbin:/usr/bin:/sbin:/bin`,
      HOME: '/root',
      ...env,
    },
    cwd: '/tmp',
  });
  return { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) };
}

/**
 * A copy of the one-file build (dist/nccl-run.mjs, what bin/ runs when it
 * lies beside it), taken once: other work rebuilds dist/ while this tier
 * runs, and `npm run build` empties dist/bin first.
 */
export function snapshotBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nccl-oracle-'));
  const copy = join(dir, 'nccl-run.mjs');
  copyFileSync(`${CHECKOUT}/dist/nccl-run.mjs`, copy);
  return copy;
}

/** Whether `npm run build` has run. */
export const builtUnavailable: string | null = existsSync(`${CHECKOUT}/dist/nccl-run.mjs`)
  ? null
  : 'nccl-run is not built (npm run build)';

const PROBE = [
  'import ctypes, sys',
  'nccl = ctypes.CDLL("libnccl.so.2")',
  'unique_id = ctypes.create_string_buffer(128)',
  'sys.exit(nccl.ncclGetUniqueId(unique_id))',
].join('\n');

/**
 * NCCL's verdict from its log, whose line begins as `using` (the release's
 * bootstrapLog: `Bootstrap : Using`, or `Bootstrap: Using` from 2.24); throws
 * when the log has neither that line nor the warning (NCCL did not get that far).
 */
export function parseBootstrapLine(log: string, using: string): Bind {
  // ncclSocketToString prints getnameinfo's host: a link-local IPv6 address carries its %zone.
  const line = new RegExp(
    `NCCL INFO ${using.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} ([^:\\s]+):(\\S+?)(?:%[^<\\s]+)?<\\d+>`,
  ).exec(log);
  if (line?.[1] !== undefined && line[2] !== undefined) {
    return { interface: line[1], address: line[2] };
  }
  // bootstrapNetInit's two "none" warnings (v2.22.3-1 src/bootstrap.cc:41 and :48, v2.29.7-1 :124 and :130):
  // NCCL_COMM_ID's subnet matched nothing, or ncclFindInterfaces found nothing.
  if (
    /NCCL WARN (Bootstrap ?: no socket interface found|NET\/Socket : No usable listening interface found)/.test(
      log,
    )
  ) {
    return null;
  }
  throw new Error(`NCCL printed no bootstrap interface:\n${log}`);
}

const hosts = (own: string, master: string | null): string =>
  [
    '127.0.0.1 localhost',
    '::1 localhost',
    `${own} node1`,
    ...(master === null ? [] : [`${master} master`]),
    '',
  ].join('\n');

/**
 * The oracle's hosts, shaped like real clusters' nodes: the management NIC
 * first in kernel order, docker/compose/libvirt bridges, a VPN tun, names
 * that are prefixes of each other, an `ib0` on an unrelated network, IPv4+IPv6
 * and IPv6-only NICs, a NIC with several addresses, a down NIC that keeps
 * its address. Interfaces in kernel order (creation order); each address list
 * in the order it is added. test/fixtures/facts/lab-*.json are their facts.
 */
export const ORACLE_LAYOUTS = {
  'mgmt-first': {
    hostname: 'node1',
    nics: [
      { name: 'eth0', addresses: ['198.18.100.5/24'] },
      { name: 'eth1', addresses: ['198.18.2.5/24'] },
    ],
    etcHosts: hosts('198.18.100.5', '198.18.2.1'),
  },
  'docker-bridges': {
    hostname: 'node1',
    nics: [
      { name: 'docker0', kind: 'bridge', addresses: ['203.0.113.1/26'] },
      { name: 'br-5f3a9c1d', kind: 'bridge', addresses: ['203.0.113.65/26'] },
      { name: 'ens1', addresses: ['198.18.3.5/24'] },
    ],
    etcHosts: hosts('198.18.3.5', null),
  },
  'virbr-vpn-first': {
    hostname: 'node1',
    nics: [
      { name: 'virbr0', kind: 'bridge', addresses: ['203.0.113.129/26'] },
      { name: 'tun0', kind: 'tun', addresses: ['198.19.7.1/24'] },
      { name: 'eth0', addresses: ['198.18.4.5/24'] },
    ],
    etcHosts: hosts('198.18.4.5', null),
  },
  'prefix-names': {
    hostname: 'node1',
    nics: [
      { name: 'eth1', addresses: ['198.18.100.5/24'] },
      { name: 'eth10', addresses: ['198.18.10.5/24'] },
    ],
    etcHosts: hosts('198.18.100.5', null),
  },
  'ib0-unrelated': {
    hostname: 'node1',
    nics: [
      { name: 'ib0', addresses: ['198.19.50.5/24'] },
      { name: 'eth0', addresses: ['198.18.5.5/24'] },
    ],
    etcHosts: hosts('198.18.5.5', null),
  },
  'dual-stack': {
    hostname: 'node1',
    nics: [
      { name: 'eth0', addresses: ['198.18.100.5/24'] },
      { name: 'eth1', addresses: ['198.18.6.5/24', '2001:db8:6::5/64'] },
    ],
    etcHosts: hosts('198.18.100.5', '2001:db8:6::1'),
  },
  'ipv6-only-nic': {
    hostname: 'node1',
    nics: [
      { name: 'eth0', addresses: ['198.18.100.5/24'] },
      { name: 'eth1', addresses: ['2001:db8:7::5/64'] },
    ],
    etcHosts: hosts('198.18.100.5', null),
  },
  'multi-address': {
    hostname: 'node1',
    nics: [
      { name: 'eth0', addresses: ['198.18.100.5/24'] },
      {
        name: 'eth1',
        addresses: ['198.18.9.5/24', '198.18.8.5/24', '2001:db8:8::5/64', '2001:db8:9::5/64'],
      },
    ],
    etcHosts: hosts('198.18.100.5', null),
  },
  'down-nic': {
    hostname: 'node1',
    nics: [
      { name: 'eth0', addresses: ['198.18.100.5/24'], down: true },
      { name: 'eth1', addresses: ['198.18.11.5/24'] },
    ],
    etcHosts: hosts('198.18.11.5', null),
  },
  'single-node': {
    hostname: 'node1',
    nics: [{ name: 'eth0', addresses: ['198.18.12.5/24', '2001:db8:12::5/64'] }],
    etcHosts: hosts('198.18.12.5', null),
  },
  'routed-master': {
    hostname: 'node1',
    nics: [
      { name: 'eth0', addresses: ['198.18.100.5/24'] },
      { name: 'eth1', addresses: ['198.18.20.5/24'] },
    ],
    routes: [
      ['default', 'via', '198.18.100.1', 'dev', 'eth0'],
      ['198.19.200.0/24', 'via', '198.18.20.1', 'dev', 'eth1'],
    ],
    etcHosts: hosts('198.18.100.5', null),
  },
} satisfies Record<string, HostSpec>;
