/**
 * `--facts FILE`: replays a host's network from a JSON snapshot instead of
 * reading this host (for tests, and for reproducing a user's report).
 *
 * Accepted shapes (JSON):
 *  - a bare HostFacts: `{ "hostname", "interfaces": [...], "routes": [...], "rdma" }`;
 *  - the output of `nccl-run explain --json`, which prints the same keys
 *    at its top level next to `master`, `decision`, `trace`... (ignored here).
 * `interfaces` is required. `hostname` may be spelled `host` (a string) or be
 * missing (then ''); `routes` may be missing (then [], and the `route`
 * strategy finds no route); `rdma` may be missing (a snapshot from before
 * nccl-run read RDMA devices: none known). Unknown keys anywhere are ignored.
 */
import { readFileSync } from 'node:fs';
import * as z from 'zod/mini';
import '../zod-english.js';
import { ConfigError } from '../errors.js';
import {
  containerSchema,
  interfaceFactsSchema,
  ncclConfSchema,
  netPluginSchema,
  rdmaFactsSchema,
  routeEntrySchema,
} from './facts-schema.js';
import type { HostFacts } from './host-facts.js';

export { hostFactsSchema } from './facts-schema.js';

const factsFileSchema = z.object({
  hostname: z.optional(z.string()),
  host: z.optional(z.unknown()),
  interfaces: z.array(interfaceFactsSchema),
  routes: z.optional(z.array(routeEntrySchema)),
  rdma: z.optional(rdmaFactsSchema),
  container: z.optional(z.nullable(containerSchema)),
  unread: z.optional(z.array(z.string())),
  resolved: z.optional(z.record(z.string(), z.array(z.string()))),
  ncclConf: z.optional(ncclConfSchema),
  netPlugin: z.optional(netPluginSchema),
});

/** Reads a facts snapshot (the `facts` of explain --json, or a bare HostFacts). */
export function readFactsFile(path: string): HostFacts {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`facts file ${path} cannot be read: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`facts file ${path} is not JSON: ${(error as Error).message}`);
  }
  const parsed = factsFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(`facts file ${path}: ${describeIssue(parsed.error.issues[0], json)}`);
  }
  const { hostname, host, interfaces, routes, rdma, container, unread, resolved } = parsed.data;
  const { ncclConf, netPlugin } = parsed.data;
  return {
    hostname: hostname ?? (typeof host === 'string' ? host : ''),
    interfaces,
    routes: routes ?? [],
    ...(rdma === undefined ? {} : { rdma }),
    ...(container === undefined ? {} : { container }),
    ...(unread === undefined ? {} : { unread }),
    ...(resolved === undefined ? {} : { resolved }),
    ...(ncclConf === undefined ? {} : { ncclConf }),
    ...(netPlugin === undefined ? {} : { netPlugin }),
  };
}

function describeIssue(issue: z.core.$ZodIssue | undefined, json: unknown): string {
  if (issue === undefined) return 'does not match the host facts schema';
  const where = issue.path.length === 0 ? 'the top level' : fieldPath(issue.path);
  const value = valueAt(json, issue.path);
  if (value === undefined) return `${where} is missing (${issue.message})`;
  return `${where} is ${preview(value)}: ${issue.message}`;
}

/** ['interfaces', 1, 'kind'] → interfaces[1].kind */
function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) =>
      typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`,
    )
    .join('');
}

function valueAt(json: unknown, path: readonly PropertyKey[]): unknown {
  let value = json;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
