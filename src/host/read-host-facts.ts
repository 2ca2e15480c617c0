/**
 * Reads this host's network once (STYLE.md: strategies only see the result).
 *
 * Sources (iproute2 runs while sysfs and /proc are read):
 *  - /sys/class/net/IF: state, carrier, speed, MTU, master, and the markers
 *    of the link's kind (sysfs-interface.ts, interface-kind.ts);
 *  - os.networkInterfaces(): addresses of interfaces that are up and running;
 *  - `ip -j -d addr show`, when iproute2 is installed and the cheap facts say
 *    it knows more (addressesHiddenFromNode): addresses of the other interfaces too (down,
 *    no carrier), and the kernel's name for the link kind;
 *  - /proc/net/fib_trie and /proc/net/if_inet6, which say whether such an
 *    interface holds an address at all (proc-addresses.ts);
 *  - /sys/class/infiniband, /sys/class/infiniband_verbs and /dev/infiniband:
 *    the RDMA devices, their ports and GID tables, the device behind an
 *    interface, and whether NCCL can open them (rdma-devices.ts,
 *    rdma-device-files.ts);
 *  - the routing table (proc-routes.ts).
 * An interface that exists in /sys but holds no address is listed too: a bond
 * member or a down NIC is exactly what a user needs to see in `explain`.
 * Order matters (HostFacts): interfaces by ifindex; each one's addresses as
 * Node lists them (libuv's getifaddrs walk), then those only ip knows (a link
 * that is not running), in ip's order, which is the same netlink dump.
 */
import { hostname, networkInterfaces } from 'node:os';
import type { HostFacts, InterfaceAddress, InterfaceFacts } from './host-facts.js';
import { interfaceKind } from './interface-kind.js';
import { sameAddress } from './ip-address.js';
import { type IpLink, parseIpAddrShow } from './ip-links.js';
import { addressesFromOs, type OsInterfaces } from './os-addresses.js';
import { readPortRange } from './port-range-file.js';
import { readProcAddresses } from './proc-addresses.js';
import { readProcRouteTable } from './proc-routes.js';
import { readDeviceFiles, readVerbsDevices } from './rdma-device-files.js';
import { readRdmaDevices } from './rdma-devices.js';
import { ipJson } from './run-ip.js';
import {
  readOperstate,
  readSysfsInterface,
  readSysfsNames,
  type SysfsInterface,
} from './sysfs-interface.js';

export interface FactSources {
  /** Where sysfs is mounted: '/sys', or a fixture tree in tests. */
  sysRoot: string;
  /** Where procfs is mounted: '/proc', or a fixture tree in tests. */
  procRoot: string;
  /** Where devtmpfs is mounted (for /dev/infiniband); '/dev' when not given. */
  devRoot?: string;
  /**
   * When to ask iproute2 for `ip -d addr show`: where sysfs shows a link whose
   * addresses Node cannot list (addressesHiddenFromNode), always, or never (sysfs, /proc
   * and Node only, as on a host without ip).
   */
  ip: IpAddrShow;
  hostname: string;
  osInterfaces: OsInterfaces;
}

export type IpAddrShow = 'when-hidden' | 'always' | 'never';

/**
 * Reads this host's interfaces once: os.networkInterfaces() plus /sys/class/net
 * and the routing table, and `ip -d addr show` where a link's addresses are
 * hidden from Node. The same host gives every command the same facts (SPEC
 * "The stack": what explain shows is what run does); `ip` (a process: about
 * 10 ms of a start-up here, child_process's load included) is asked because
 * of what the host is, never because of the command.
 */
export async function readHostFacts({
  ip = 'when-hidden',
}: {
  ip?: IpAddrShow;
} = {}): Promise<HostFacts> {
  return readHostFactsFrom({
    sysRoot: '/sys',
    procRoot: '/proc',
    ip,
    hostname: hostname(),
    osInterfaces: networkInterfaces(),
  });
}

export async function readHostFactsFrom(sources: FactSources): Promise<HostFacts> {
  const names = readSysfsNames(sources.sysRoot);
  const askIp =
    sources.ip === 'always' ||
    (sources.ip === 'when-hidden' &&
      addressesHiddenFromNode(sources.sysRoot, sources.procRoot, names, sources.osInterfaces));
  // ip starts first and runs while sysfs and /proc are read.
  const pending = askIp ? ipJson(['-d', 'addr', 'show']).then(parseIpAddrShow) : [];
  const sysfs = names.map((name) => readSysfsInterface(sources.sysRoot, name));
  const routes = readProcRouteTable(sources.procRoot);
  const rdma = readRdmaDevices(sources.sysRoot, readVerbsDevices(sources.sysRoot));
  const deviceFiles = readDeviceFiles(sources.devRoot ?? '/dev');
  const ipLinks = await pending;
  const osAddresses = addressesFromOs(sources.osInterfaces);
  const sysfsByName = new Map(sysfs.map((entry) => [entry.name, entry]));
  const ipByName = new Map(ipLinks.map((link) => [link.name, link]));

  // Names Node or ip know but sysfs does not (no /sys in this container) still count.
  for (const name of new Set([...osAddresses.keys(), ...ipByName.keys()])) {
    if (!sysfsByName.has(name)) sysfsByName.set(name, readSysfsInterface(sources.sysRoot, name));
  }

  // Kernel order: sysfs's ifindex, else ip's; links neither knows keep the order they were
  // found in, which for Node's list is getifaddrs' own.
  const ifindex = (entry: SysfsInterface) =>
    entry.ifindex ?? ipByName.get(entry.name)?.ifindex ?? Number.MAX_SAFE_INTEGER;
  const interfaces = [...sysfsByName.values()]
    .sort((a, b) => ifindex(a) - ifindex(b))
    .map((entry) =>
      interfaceFacts(
        entry,
        ipByName.get(entry.name),
        osAddresses.get(entry.name) ?? [],
        rdma.byNetdev.get(entry.name) ?? null,
      ),
    );
  return {
    hostname: sources.hostname,
    interfaces,
    routes,
    rdma: { devices: rdma.devices, deviceFiles },
    ...portRangeOf(sources.procRoot),
  };
}

function portRangeOf(procRoot: string): { portRange?: [number, number] } {
  const range = readPortRange(procRoot);
  return range === null ? {} : { portRange: range };
}

/**
 * Whether a link holds addresses os.networkInterfaces() cannot show: libuv
 * lists only IFF_UP|IFF_RUNNING links (uv__ifaddr_exclude), and IFF_RUNNING
 * is netif_oper_up(), so a link whose sysfs operstate (DOWN whenever the link
 * is not IFF_UP, net-sysfs.c operstate_show) is neither up nor unknown may
 * hold addresses only `ip` sees: the down data NIC that holds the master's
 * subnet, or what NCCL 2.19-2.27 walks. A running link Node lacks holds no
 * address (a bridge port, a bond member), and asks nothing; nor does a down
 * link that /proc shows holding none (an ifb, a spare NIC): an IPv6 address
 * on it, or an IPv4 address with a local route that Node does not list, asks.
 * (An IPv4 address a down link shares with a running one goes unseen.)
 * Without sysfs or /proc (a container that does not mount them) nothing can
 * be told apart: ip is asked.
 */
export function addressesHiddenFromNode(
  sysRoot: string,
  procRoot: string,
  names: readonly string[],
  osInterfaces: OsInterfaces,
): boolean {
  if (names.length === 0) return true;
  const unlisted = names.filter((name) => {
    if (osInterfaces[name] !== undefined) return false;
    const operstate = readOperstate(sysRoot, name);
    return operstate !== 'up' && operstate !== 'unknown';
  });
  if (unlisted.length === 0) return false;
  const held = readProcAddresses(procRoot);
  if (held === null || unlisted.some((name) => held.ipv6Links.has(name))) return true;
  const listed = new Set(
    Object.values(osInterfaces).flatMap((infos) =>
      (infos ?? []).filter((info) => info.family === 'IPv4').map((info) => info.address),
    ),
  );
  return [...held.ipv4].some((address) => !listed.has(address));
}

function interfaceFacts(
  sysfs: SysfsInterface,
  ipLink: IpLink | undefined,
  osAddresses: InterfaceAddress[],
  rdma: InterfaceFacts['rdma'],
): InterfaceFacts {
  return {
    name: sysfs.name,
    operstate: sysfs.operstate,
    carrier: sysfs.carrier,
    addresses: mergeAddresses(osAddresses, ipLink?.addresses ?? []),
    speedMbps: sysfs.speedMbps,
    mtu: sysfs.mtu,
    kind: interfaceKind({
      ...sysfs.signals,
      linkKind: ipLink?.kind ?? null,
      slaveKind: ipLink?.slaveKind ?? null,
    }),
    master: sysfs.master,
    rdma,
    ...(sysfs.vendor === null ? {} : { vendor: sysfs.vendor }),
  };
}

function mergeAddresses(first: InterfaceAddress[], second: InterfaceAddress[]): InterfaceAddress[] {
  const merged = [...first];
  for (const candidate of second) {
    const known = merged.some(
      (address) =>
        address.prefixLength === candidate.prefixLength &&
        sameAddress(address.address, candidate.address),
    );
    if (!known) merged.push(candidate);
  }
  return merged;
}
