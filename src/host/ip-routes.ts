/** The kernel's pick of a route for one address, as `ip -j route get ADDR` prints it. */
import * as z from 'zod/mini';
import type { RouteAnswer, RouteEntry } from './host-facts.js';

const ipRouteSchema = z.looseObject({
  type: z.optional(z.string()),
  dst: z.string(),
  dev: z.optional(z.string()),
  gateway: z.optional(z.string()),
  prefsrc: z.optional(z.string()),
});

type IpRoute = z.infer<typeof ipRouteSchema>;

function routeType(type: string | undefined): RouteEntry['type'] | null {
  // ip omits "type" for unicast. broadcast, multicast, anycast, unreachable,
  // blackhole, prohibit and throw never carry a peer's traffic out of an interface.
  if (type === undefined || type === 'unicast') return 'unicast';
  if (type === 'local') return 'local';
  return null;
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
