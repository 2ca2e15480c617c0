/**
 * This host's routing table: iproute2 when it answers (it sees every table,
 * local routes included), else /proc (main table for IPv4, all tables for IPv6).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RouteEntry } from './host-facts.js';
import { parseIpRouteShow } from './ip-routes.js';
import { parseProcIpv6Route, parseProcNetRoute } from './proc-routes.js';
import { ipJson } from './run-ip.js';

export interface RouteSource {
  /** Ask iproute2 first; false reads /proc only, as on a host without it. */
  ip: boolean;
  /** Where /proc is mounted ('/proc'); a fixture tree in tests. */
  procRoot: string;
}

export async function readRouteTable(source: RouteSource): Promise<RouteEntry[]> {
  if (source.ip) {
    const [v4, v6] = await Promise.all([
      ipJson(['-4', 'route', 'show', 'table', 'all']),
      ipJson(['-6', 'route', 'show', 'table', 'all']),
    ]);
    if (v4 !== null && v6 !== null) {
      return [...parseIpRouteShow(v4, 'ipv4'), ...parseIpRouteShow(v6, 'ipv6')];
    }
  }
  return readProcRouteTable(source.procRoot);
}

export async function readProcRouteTable(procRoot: string): Promise<RouteEntry[]> {
  // A kernel without IPv6 has no ipv6_route; an empty table is the truth there.
  const [v4, v6] = await Promise.all([
    readFile(join(procRoot, 'net/route'), 'utf8').catch(() => ''),
    readFile(join(procRoot, 'net/ipv6_route'), 'utf8').catch(() => ''),
  ]);
  return [...parseProcNetRoute(v4), ...parseProcIpv6Route(v6)];
}
