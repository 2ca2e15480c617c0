/**
 * "Which interface reaches this address" (SPEC strategy `route`).
 * Live: the kernel itself, `ip -j route get ADDR` per address, in parallel,
 * but for a loopback address that `lo` holds, whose answer is fixed (below);
 * on a host without iproute2, the same longest-prefix match a snapshot gets,
 * over /proc/net/route and /proc/net/ipv6_route. Replay (`--facts`): the
 * longest-prefix match over the snapshot's routes.
 */
import type { HostFacts, RouteAnswer } from './host-facts.js';
import {
  canonicalAddress,
  familyOf,
  interfaceHolding,
  isLoopbackAddress,
  withoutZone,
} from './ip-address.js';
import { parseIpRouteGet } from './ip-routes.js';
import { longestPrefixRoute } from './longest-prefix-route.js';
import { readProcRouteTable } from './proc-routes.js';
import { runIp } from './run-ip.js';

export interface RouteLookup {
  /**
   * Ask iproute2 (default true); false goes straight to /proc, as on a host without ip.
   * An `ip` that fails other than with the kernel's "RTNETLINK answers" also means /proc.
   */
  ip?: boolean;
  /** Where procfs is mounted (default '/proc'). */
  procRoot?: string;
}

/**
 * The kernel's route to each address. live: ask this host (ip -j route get,
 * else /proc); otherwise a longest-prefix match over facts.routes (replay).
 * An address with no route (or that is not an address) has no answer, so the
 * result may be shorter than `addresses`; each answer names its destination.
 */
export async function routeTo(
  addresses: readonly string[],
  hostFacts: HostFacts | Promise<HostFacts>,
  live: boolean,
  lookup: RouteLookup = {},
): Promise<RouteAnswer[]> {
  const wanted = addresses.filter((address) => familyOf(address) !== null);
  // Facts may still be on their way: the kernel is asked meanwhile, so the two
  // `ip` runs of a start-up overlap; the facts only name a local route's owner.
  if (!live) return replayRoutes(wanted, await hostFacts);
  if (lookup.ip ?? true) {
    const answers = await Promise.all(wanted.map((address) => kernelRoute(address, hostFacts)));
    if (!answers.includes('no-ip')) {
      return answers.filter(
        (answer): answer is RouteAnswer => answer !== null && answer !== 'no-ip',
      );
    }
  }
  return matchAll(wanted, readProcRouteTable(lookup.procRoot ?? '/proc'), await hostFacts);
}

/** The routes a snapshot's table gives: the longest-prefix match over facts.routes. */
export function replayRoutes(addresses: readonly string[], facts: HostFacts): RouteAnswer[] {
  return matchAll(
    addresses.filter((address) => familyOf(address) !== null),
    facts.routes,
    facts,
  );
}

function matchAll(
  addresses: readonly string[],
  routes: HostFacts['routes'],
  facts: HostFacts,
): RouteAnswer[] {
  return addresses
    .map((address) => longestPrefixRoute(routes, address, facts))
    .filter((answer): answer is RouteAnswer => answer !== null);
}

async function kernelRoute(
  address: string,
  hostFacts: HostFacts | Promise<HostFacts>,
): Promise<RouteAnswer | null | 'no-ip'> {
  const bare = withoutZone(address);
  const local = isLoopbackAddress(bare) ? await loopbackRoute(bare, hostFacts) : null;
  if (local !== null) return local;
  // A zone (fe80::1%eth0) is how a link-local peer names its interface; ip wants it as oif.
  const zone = address === bare ? [] : ['oif', address.slice(bare.length + 1)];
  const run = await runIp(['-j', 'route', 'get', bare, ...zone]);
  if (!run.installed) return 'no-ip';
  if (run.exitCode !== 0) {
    // "RTNETLINK answers: Network is unreachable" is the kernel saying: no route. Any other
    // failure is ip's own (BusyBox's ip has no -j, a timeout): /proc can still answer.
    return /RTNETLINK answers/.test(run.stderr) ? null : 'no-ip';
  }
  let json: unknown;
  try {
    json = JSON.parse(run.stdout);
  } catch {
    return 'no-ip';
  }
  const answer = parseIpRouteGet(json);
  if (answer === null || answer.type !== 'local') return answer;
  // The kernel delivers its own addresses through `lo`; SPEC "route" wants the owner.
  const holder = interfaceHolding((await hostFacts).interfaces, bare);
  return { ...answer, interface: holder?.name ?? answer.interface };
}

/**
 * The kernel routes an address that `lo` holds (127.0.0.1, ::1) through the
 * local route fib_add_ifaddr made for it (`local X dev lo src X`), and sends
 * no loopback address out of another link (a martian, ip_route_output_key):
 * `ip route get` would answer just this, at the price of a process. Another
 * 127/8 address is asked (its source is lo's own, 127.0.0.1).
 */
async function loopbackRoute(
  address: string,
  hostFacts: HostFacts | Promise<HostFacts>,
): Promise<RouteAnswer | null> {
  const holder = interfaceHolding((await hostFacts).interfaces, address);
  if (holder?.kind !== 'loopback') return null;
  const canonical = canonicalAddress(address);
  return {
    destination: canonical,
    interface: holder.name,
    source: canonical,
    gateway: null,
    type: 'local',
  };
}
