/**
 * The kernel's route choice, replayed over a routing table (a `--facts`
 * snapshot, or /proc on a host without iproute2).
 *
 * Rule order (`ip rule`, fib_rules default: 0 local, 32766 main, 32767
 * default): an address of this host is delivered locally before any other
 * route is looked at. Within a table the longest prefix wins, and among
 * routes of equal prefix the lowest metric (fib_priority; IPv6 rt6 metric).
 * Routes that only policy rules reach are not in the snapshot (ip-routes.ts).
 */
import type { Family, HostFacts, InterfaceFacts, RouteAnswer, RouteEntry } from './host-facts.js';
import {
  addressScope,
  familyOf,
  interfaceHolding,
  prefixContains,
  withoutZone,
} from './ip-address.js';

export function longestPrefixRoute(
  routes: readonly RouteEntry[],
  address: string,
  facts: HostFacts,
): RouteAnswer | null {
  const family = familyOf(address);
  if (family === null) return null;
  const bare = withoutZone(address);

  const holder = interfaceHolding(facts.interfaces, bare);
  const localRoute = bestRoute(routes, 'local', family, bare);
  if (holder !== undefined) return localAnswer(bare, holder.name, bare);
  // /proc/net/route has no local table: loopback is recognised by its address (RFC 1122 127/8, ::1).
  const loopback =
    addressScope(bare) === 'host'
      ? facts.interfaces.find((iface) => iface.kind === 'loopback')
      : undefined;
  const localVia = localRoute?.interface ?? loopback?.name;
  if (localVia !== undefined) {
    // Sent to a local address nobody holds (127.0.0.3), the kernel answers from the interface's own.
    const own = facts.interfaces
      .find((iface) => iface.name === localVia)
      ?.addresses.find((held) => held.family === family);
    return localAnswer(bare, localVia, own?.address ?? bare);
  }

  const route = bestRoute(routes, 'unicast', family, bare);
  if (route === null) return null;
  return {
    destination: bare,
    interface: route.interface,
    source: preferredSource(
      facts.interfaces.find((iface) => iface.name === route.interface),
      family,
      bare,
      route.gateway,
    ),
    gateway: route.gateway,
    type: 'unicast',
  };
}

function bestRoute(
  routes: readonly RouteEntry[],
  type: RouteEntry['type'],
  family: Family,
  address: string,
): RouteEntry | null {
  let best: RouteEntry | null = null;
  for (const route of routes) {
    if (route.type !== type || route.family !== family) continue;
    if (!prefixContains(route.destination, route.prefixLength, address)) continue;
    if (
      best === null ||
      route.prefixLength > best.prefixLength ||
      (route.prefixLength === best.prefixLength && route.metric < best.metric)
    ) {
      best = route;
    }
  }
  return best;
}

/** The kernel answers `dev lo` for its own addresses; SPEC "route" wants their owner. */
function localAnswer(address: string, iface: string, source: string): RouteAnswer {
  return { destination: address, interface: iface, source, gateway: null, type: 'local' };
}

/**
 * The source address the kernel would pick (RFC 6724 rule 2 prefers a
 * matching scope; fib_select_default/inet_select_addr prefer an address on the
 * destination's subnet): one on the same subnet as the destination or the
 * gateway, else the interface's first global address of the family.
 */
function preferredSource(
  iface: InterfaceFacts | undefined,
  family: Family,
  destination: string,
  gateway: string | null,
): string | null {
  const candidates = (iface?.addresses ?? []).filter(
    (held) => held.family === family && held.scope === 'global',
  );
  const onSubnet = (target: string) =>
    candidates.find((held) => prefixContains(held.address, held.prefixLength, target));
  return (
    onSubnet(destination)?.address ??
    (gateway === null ? undefined : onSubnet(gateway)?.address) ??
    candidates[0]?.address ??
    null
  );
}
