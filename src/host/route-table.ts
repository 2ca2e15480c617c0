/**
 * This host's routing table, from /proc (the main table for IPv4, every table
 * for IPv6): a file read on every host and in every slim image, where
 * `ip route show table all` would cost two process spawns on every
 * invocation. The table only serves replaying a snapshot; live resolution
 * asks the kernel itself (`ip route get`, routes.ts), policy rules included.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RouteEntry } from './host-facts.js';
import { parseProcIpv6Route, parseProcNetRoute } from './proc-routes.js';

export async function readProcRouteTable(procRoot: string): Promise<RouteEntry[]> {
  // A kernel without IPv6 has no ipv6_route; an empty table is the truth there.
  const [v4, v6] = await Promise.all([
    readFile(join(procRoot, 'net/route'), 'utf8').catch(() => ''),
    readFile(join(procRoot, 'net/ipv6_route'), 'utf8').catch(() => ''),
  ]);
  return [...parseProcNetRoute(v4), ...parseProcIpv6Route(v6)];
}
