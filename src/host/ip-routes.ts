/**
 * Routes as iproute2 prints them with -j: `ip -4|-6 -j route show table all`
 * (the table) and `ip -j route get ADDR` (the kernel's pick for one address).
 */
import { z } from 'zod';
import type { Family, RouteAnswer, RouteEntry } from './host-facts.js';
import { familyOf, hostPrefixLength } from './ip-address.js';

/**
 * The tables the kernel's default rules consult (`ip rule`: local 255, main
 * 254, default 253). Routes in other tables only apply through policy rules,
 * which a snapshot does not carry, so they are left out rather than matched wrongly.
 */
const DEFAULT_RULE_TABLES = new Set(['main', 'local', 'default']);

const nexthopSchema = z.looseObject({ dev: z.string().optional(), gateway: z.string().optional() });

const ipRouteSchema = z.looseObject({
  type: z.string().optional(),
  dst: z.string(),
  dev: z.string().optional(),
  gateway: z.string().optional(),
  metric: z.number().optional(),
  table: z.string().optional(),
  prefsrc: z.string().optional(),
  nexthops: z.array(nexthopSchema).optional(),
});

type IpRoute = z.infer<typeof ipRouteSchema>;

function routeType(type: string | undefined): RouteEntry['type'] | null {
  // ip omits "type" for unicast. broadcast, multicast, anycast, unreachable,
  // blackhole, prohibit and throw never carry a peer's traffic out of an interface.
  if (type === undefined || type === 'unicast') return 'unicast';
  if (type === 'local') return 'local';
  return null;
}

/** Parses `ip -4|-6 -j route show table all`; `family` is the -4/-6 the table was asked with. */
export function parseIpRouteShow(json: unknown, family: Family): RouteEntry[] {
  if (!Array.isArray(json)) return [];
  const routes: RouteEntry[] = [];
  for (const entry of json) {
    const parsed = ipRouteSchema.safeParse(entry);
    if (!parsed.success) continue;
    const route = parsed.data;
    const type = routeType(route.type);
    if (type === null || !DEFAULT_RULE_TABLES.has(route.table ?? 'main')) continue;
    const destination = parseDestination(route.dst, family);
    if (destination === null) continue;
    // A multipath route lists its ways out as nexthops; each is a way to the prefix.
    const hops = route.nexthops ?? [{ dev: route.dev, gateway: route.gateway }];
    for (const hop of hops) {
      // "default" says nothing of its family; the gateway does (a table asked with -4 holds IPv4 routes).
      if (
        hop.dev === undefined ||
        (hop.gateway !== undefined && familyOf(hop.gateway) !== family)
      ) {
        continue;
      }
      routes.push({
        family,
        ...destination,
        interface: hop.dev,
        gateway: hop.gateway ?? null,
        metric: route.metric ?? 0,
        type,
      });
    }
  }
  return routes;
}

function parseDestination(
  dst: string,
  family: Family,
): { destination: string; prefixLength: number } | null {
  if (dst === 'default') {
    return { destination: family === 'ipv4' ? '0.0.0.0' : '::', prefixLength: 0 };
  }
  const [network = '', length] = dst.split('/');
  if (familyOf(network) !== family) return null;
  const prefixLength = length === undefined ? hostPrefixLength(family) : Number(length);
  if (
    !Number.isInteger(prefixLength) ||
    prefixLength < 0 ||
    prefixLength > hostPrefixLength(family)
  ) {
    return null;
  }
  return { destination: network, prefixLength };
}

/**
 * Parses `ip -j route get ADDR`. Returns null for answers that do not leave
 * through an interface (broadcast, multicast, unreachable...). For a local
 * address the kernel names `lo`; routes.ts swaps in the interface that holds it.
 */
export function parseIpRouteGet(json: unknown): RouteAnswer | null {
  const first: unknown = Array.isArray(json) ? json[0] : undefined;
  const parsed = ipRouteSchema.safeParse(first);
  if (!parsed.success) return null;
  const route: IpRoute = parsed.data;
  const type = routeType(route.type);
  if (type === null || route.dev === undefined) return null;
  return {
    destination: route.dst,
    interface: route.dev,
    source: route.prefsrc ?? null,
    gateway: route.gateway ?? null,
    type,
  };
}
