/**
 * NCCL's own interface selection, as a pure function of the host's facts
 * (SPEC "NCCL's own pick"). Read at the source, NVIDIA/nccl:
 *
 * - src/misc/socket.cc ncclFindInterfaces (v2.22.3-1; src/misc/socket.cc
 *   and src/os/linux.cc ncclOsFindInterfaces from v2.29): NCCL_SOCKET_IFNAME
 *   when it is longer than one character, else `ib`, then anything but
 *   `docker`/`lo`, then `docker`, then `lo`. v2.28.3-1 adds `virbr` to the
 *   excluded names (and tries it last) and skips every address whose
 *   interface lacks IFF_RUNNING, also under the user's own list.
 * - findInterfaces walks getifaddrs(): glibc lists every IPv4 address of
 *   every interface before any IPv6 address (the kernel's RTM_GETADDR dump,
 *   family by family, interfaces by ifindex, each interface's addresses in
 *   its own order); it skips ::1 but not a link-local address, honours
 *   NCCL_SOCKET_FAMILY (exactly "AF_INET" or "AF_INET6"), and keeps the first
 *   address it meets per interface: the address NCCL binds.
 * - src/bootstrap.cc bootstrapNetInit: with NCCL_COMM_ID set at all, the
 *   bootstrap ignores the list and takes the first address whose subnet holds
 *   the COMM_ID's address (ncclFindInterfaceMatchSubnet: every interface, no
 *   IFF_RUNNING test, no ::1 skip). NCCL 2.29.2 to 2.29.7 invert that test
 *   for IPv4 (releases.ts commIdSubnetMatch): the first IPv4 address whose
 *   subnet does NOT hold it, usually lo's 127.0.0.1. No variable nccl-run
 *   sets reaches this walk (NCCL_SOCKET_IFNAME does not), so for those
 *   releases a warning says so (env/nccl-pick-warnings.ts).
 *
 * Two walks share this model. The bootstrap's pick (maxIfs 1) is the
 * interface and address NCCL logs as "Bootstrap : Using IF:ADDR". The socket
 * transport's data-plane devices (ncclNetSocketInit) are the same
 * ncclFindInterfaces with maxIfs MAX_IFS (16), logged as "NET/Socket : Using
 * [0]IF:ADDR [1]...": v2.22.3-1 src/transport/net_socket.cc:44, v2.28.9-1
 * src/transport/net_socket.cc:58, v2.29.7-1 src/transport/net_socket.cc:60.
 * Each list is found whole by one prefix list (the first that finds any
 * wins), one entry per interface, its first address in the walk
 * (findInterfaces' duplicate test: v2.22.3-1 src/misc/socket.cc:144-151,
 * v2.29.7-1 src/os/linux.cc:350-355). Without a NCCL_SOCKET_IFNAME NCCL
 * honours, the transport tries, after `ib` and before the other defaults,
 * the one interface whose subnet holds NCCL_COMM_ID's address
 * (ncclFindInterfaces: v2.22.3-1 src/misc/socket.cc:340-349, v2.28.9-1
 * src/misc/socket.cc:372-381, v2.29.7-1 src/misc/socket.cc:182-191; the
 * match stops at one, v2.22.3-1 src/misc/socket.cc:210 `!found`). So with
 * no NCCL_COMM_ID the bootstrap's pick is the first device. The facts carry
 * interfaces in ifindex order and each interface's addresses in the
 * kernel's order (host/host-facts.ts), which is all the walk needs.
 */
import type { Family, HostFacts, InterfaceAddress, InterfaceFacts } from '../host/host-facts.js';
import { familyOf, isLoopbackAddress, prefixContains, withoutZone } from '../host/ip-address.js';
import { isUp } from '../host/link-state.js';
import { interfaceRules, type NcclRules } from './behaviour.js';
import { ncclHonoursIfname, ncclIfnameMatches, parseNcclIfname } from './nccl-ifname.js';
import type { NcclBehaviour } from './releases.js';

export { type NcclRules, ncclRules } from './behaviour.js';

/** NCCL_SOCKET_FAMILY's two values (ncclEnvSocketFamily strcmp()s exactly these). */
export const SOCKET_FAMILY: Record<Family, string> = { ipv4: 'AF_INET', ipv6: 'AF_INET6' };

/** What NCCL reads, from its environment and then its configuration files; null when unset. */
export interface NcclSettings {
  ifname: string | null;
  family: string | null;
  commId: string | null;
}

export interface NcclBind {
  interface: string;
  address: string;
}

/** MAX_IFS: the socket transport's most devices (v2.22.3-1 src/include/socket.h, src/transport/net_socket.cc:26). */
export const MAX_SOCKET_DEVICES = 16;

/** NCCL's settings in an environment (the job's, with NCCL's own files' values below it). */
export function ncclSettings(env: Readonly<Record<string, string | undefined>>): NcclSettings {
  return {
    ifname: env.NCCL_SOCKET_IFNAME ?? null,
    family: env.NCCL_SOCKET_FAMILY ?? null,
    commId: env.NCCL_COMM_ID ?? null,
  };
}

/**
 * The bootstrap's pick under `settings`; commIdAddress: what NCCL_COMM_ID's
 * host resolves to; commIdMatch: the release's subnet test (releases.ts).
 */
export function ncclPick(
  facts: HostFacts,
  settings: NcclSettings,
  rules: NcclRules,
  commIdAddress: string | null = null,
  commIdMatch: NcclBehaviour['commIdSubnetMatch'] = 'holds',
): NcclBind | null {
  if (settings.commId !== null) {
    return commIdAddress === null ? null : matchSubnet(facts, commIdAddress, commIdMatch);
  }
  return findInterfaceList(facts, settings, rules, 1, null, commIdMatch)[0] ?? null;
}

/**
 * The socket transport's devices in NCCL's index order (`[0]`, `[1]`, ...):
 * ncclFindInterfaces with maxIfs MAX_IFS. Empty where NCCL logs "NET/Socket :
 * no interface found".
 */
export function ncclDevices(
  facts: HostFacts,
  settings: NcclSettings,
  rules: NcclRules,
  commIdAddress: string | null = null,
  commIdMatch: NcclBehaviour['commIdSubnetMatch'] = 'holds',
): NcclBind[] {
  // ncclFindInterfaces tries NCCL_COMM_ID's subnet only for a value longer than one character.
  const commId = settings.commId !== null && settings.commId.length > 1 ? commIdAddress : null;
  return findInterfaceList(facts, settings, rules, MAX_SOCKET_DEVICES, commId, commIdMatch);
}

/** ncclFindInterfaces(..., maxIfs): the user's list, else the defaults in turn, the first that finds any. */
function findInterfaceList(
  facts: HostFacts,
  settings: NcclSettings,
  rules: NcclRules,
  maxIfs: number,
  commIdAddress: string | null,
  commIdMatch: NcclBehaviour['commIdSubnetMatch'],
): NcclBind[] {
  const family = socketFamily(settings.family);
  if (settings.ifname !== null && ncclHonoursIfname(settings.ifname)) {
    return findInterfaces(facts, settings.ifname, family, rules, maxIfs);
  }
  const [first = 'ib', ...rest] = interfaceRules(rules).defaultIfnames;
  const ib = findInterfaces(facts, first, family, rules, maxIfs);
  if (ib.length > 0) return ib;
  if (commIdAddress !== null) {
    const matched = matchSubnet(facts, commIdAddress, commIdMatch);
    if (matched !== null) return [matched];
  }
  for (const list of rest) {
    const found = findInterfaces(facts, list, family, rules, maxIfs);
    if (found.length > 0) return found;
  }
  return [];
}

/**
 * The address NCCL binds on `name` when nccl-run exports `=NAME` and the
 * family: the first of the family in the kernel's order. Loopback's ::1 is
 * skipped, so on `lo` an IPv6 job's sockets run on IPv4 (SPEC "What it
 * exports"); null when NCCL would find nothing there.
 */
export function ncclBindOn(
  facts: HostFacts,
  name: string,
  family: Family,
  rules: NcclRules,
): { address: string; family: Family } | null {
  const [found] = findInterfaces(facts, `=${name}`, family, rules, 1);
  if (found !== undefined) return { address: found.address, family };
  const iface = facts.interfaces.find((candidate) => candidate.name === name);
  if (iface?.kind !== 'loopback' || family === 'ipv4') return null;
  const [ipv4] = findInterfaces(facts, `=${name}`, 'ipv4', rules, 1);
  return ipv4 === undefined ? null : { address: ipv4.address, family: 'ipv4' };
}

/**
 * The host part of NCCL_COMM_ID as ncclSocketGetAddrFromString reads it:
 * `[v6]:port` (a %zone kept), else everything before the first `:` or `,`
 * (parseStringList with one entry), which getaddrinfo then resolves. null
 * when NCCL rejects the value.
 */
export function commIdHost(value: string): string | null {
  if (value.length <= 1) return null;
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    return close === -1 ? null : value.slice(1, close);
  }
  const host = /^[^:,]*/.exec(value)?.[0] ?? '';
  return host === '' ? null : host;
}

interface WalkEntry {
  iface: InterfaceFacts;
  address: InterfaceAddress;
}

/** One walk per facts: the bootstrap's and the transport's, managed and unmanaged, share it. */
const walks = new WeakMap<HostFacts, WalkEntry[]>();

/** getifaddrs' address entries: every IPv4 address of every interface, then every IPv6 one. */
function walk(facts: HostFacts): WalkEntry[] {
  const known = walks.get(facts);
  if (known !== undefined) return known;
  const entries: WalkEntry[] = [];
  walks.set(facts, entries);
  for (const family of ['ipv4', 'ipv6'] as const) {
    for (const iface of facts.interfaces) {
      for (const address of iface.addresses) {
        if (address.family === family) entries.push({ iface, address });
      }
    }
  }
  return entries;
}

/** The family NCCL_SOCKET_FAMILY forces; null for any other value, which NCCL ignores. */
export function socketFamily(value: string | null): Family | null {
  if (value === SOCKET_FAMILY.ipv4) return 'ipv4';
  if (value === SOCKET_FAMILY.ipv6) return 'ipv6';
  return null;
}

/**
 * findInterfaces(prefixList, ..., maxIfs): the entries that pass every test,
 * one per interface (its first), at most maxIfs.
 */
function findInterfaces(
  facts: HostFacts,
  list: string,
  family: Family | null,
  rules: NcclRules,
  maxIfs: number,
): NcclBind[] {
  const parsed = parseNcclIfname(list);
  const skipsNotRunning = interfaceRules(rules).skipsNotRunning;
  const found: NcclBind[] = [];
  for (const { iface, address } of walk(facts)) {
    // Cheapest test first: this walk runs over every address of a host with a thousand veths.
    if (!ncclIfnameMatches(parsed, iface.name)) continue;
    if (skipsNotRunning && !isUp(iface)) continue;
    if (family !== null && address.family !== family) continue;
    // ::1 is the only IPv6 loopback address.
    if (address.family === 'ipv6' && isLoopbackAddress(address.address)) continue;
    if (found.some((device) => device.interface === iface.name)) continue;
    found.push({ interface: iface.name, address: withoutZone(address.address) });
    if (found.length === maxIfs) break;
  }
  return found;
}

/**
 * ncclFindInterfaceMatchSubnet: the first entry whose prefix holds `remote`.
 * A link-local address matches only with the same scope: the remote's %zone
 * names the interface (if_nametoindex), and a local one carries its own.
 */
function matchSubnet(
  facts: HostFacts,
  remote: string,
  match: NcclBehaviour['commIdSubnetMatch'],
): NcclBind | null {
  const zone = remote.includes('%') ? remote.slice(remote.indexOf('%') + 1) : null;
  const family = familyOf(remote);
  const inverted = match === 'inverted' && family === 'ipv4';
  for (const { iface, address } of walk(facts)) {
    if (address.family !== family) continue;
    if (prefixContains(address.address, address.prefixLength, remote) === inverted) continue;
    const scoped = address.family === 'ipv6' && address.scope === 'link';
    if (scoped ? zone !== iface.name : zone !== null) continue;
    return { interface: iface.name, address: withoutZone(address.address) };
  }
  return null;
}
