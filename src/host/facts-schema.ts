/**
 * The HostFacts contract (host-facts.ts) as a zod schema, for values that come
 * from outside: `--facts` snapshots. Unknown keys are dropped (explain --json
 * adds a verdict per interface); every field of the contract is required but
 * `rdma` and `portRange`, which snapshots from before nccl-run read them lack.
 */
import * as z from 'zod/mini';
import { type HostFacts, NET_PLUGIN_KIND_IDS } from './host-facts.js';
import { familyOf, hostPrefixLength } from './ip-address.js';

const familySchema = z.enum(['ipv4', 'ipv6']);

/** An address literal of the sibling `family`, and a prefix length that fits it. */
function refineAddressFamily(
  value: { family: 'ipv4' | 'ipv6'; prefixLength: number },
  address: string,
  addressKey: string,
  ctx: z.core.$RefinementCtx,
): void {
  if (familyOf(address) !== value.family) {
    ctx.addIssue({
      code: 'custom',
      path: [addressKey],
      input: address,
      message: `expected an ${value.family === 'ipv4' ? 'IPv4' : 'IPv6'} address (family is ${value.family})`,
    });
  }
  if (value.prefixLength > hostPrefixLength(value.family)) {
    ctx.addIssue({
      code: 'custom',
      path: ['prefixLength'],
      input: value.prefixLength,
      message: `expected 0-${hostPrefixLength(value.family)} for ${value.family}`,
    });
  }
}

const prefixLengthSchema = z.number().check(z.int(), z.gte(0), z.lte(128));

const interfaceAddressSchema = z
  .object({
    address: z.string(),
    family: familySchema,
    prefixLength: prefixLengthSchema,
    scope: z.enum(['host', 'link', 'global']),
  })
  .check(z.superRefine((value, ctx) => refineAddressFamily(value, value.address, 'address', ctx)));

const rdmaDeviceSchema = z.object({
  device: z.string().check(z.minLength(1)),
  port: z.nullable(z.number().check(z.int(), z.positive())),
  state: z.nullable(z.string()),
});

export const interfaceFactsSchema = z.object({
  name: z.string().check(z.minLength(1)),
  operstate: z.nullable(z.string()),
  carrier: z.nullable(z.boolean()),
  addresses: z.array(interfaceAddressSchema),
  speedMbps: z.nullable(z.number().check(z.positive())),
  mtu: z.nullable(z.number().check(z.int(), z.positive())),
  kind: z.enum([
    'loopback',
    'physical',
    'bond',
    'bond-member',
    'bridge',
    'veth',
    'vlan',
    'macvlan',
    'tunnel',
    'infiniband',
    'other-virtual',
  ]),
  master: z.nullable(z.string()),
  rdma: z.nullable(rdmaDeviceSchema),
  vendor: z.optional(z.string()),
});

export const routeEntrySchema = z
  .object({
    family: familySchema,
    destination: z.string(),
    prefixLength: prefixLengthSchema,
    interface: z.string().check(z.minLength(1)),
    gateway: z.nullable(z.string()),
    metric: z.number().check(z.int(), z.gte(0)),
    type: z.enum(['unicast', 'local']),
  })
  .check(
    z.superRefine((value, ctx) => {
      refineAddressFamily(value, value.destination, 'destination', ctx);
      if (value.gateway !== null && familyOf(value.gateway) === null) {
        ctx.addIssue({
          code: 'custom',
          path: ['gateway'],
          input: value.gateway,
          message: 'expected an IP address or null',
        });
      }
    }),
  );

/** %pI6, as ports/N/gids/I prints a GID (lib/vsprintf.c ip6_string): eight groups of four hex digits. */
const GID_TEXT = /^[0-9a-f]{4}(?::[0-9a-f]{4}){7}$/;

const gidEntrySchema = z.object({
  index: z.number().check(z.int(), z.gte(0)),
  gid: z
    .string()
    .check(z.regex(GID_TEXT, 'expected a GID as sysfs prints it (8 groups of 4 hex digits)')),
  type: z.nullable(z.string()),
  netdev: z.nullable(z.string()),
});

const rdmaPortSchema = z.object({
  port: z.number().check(z.int(), z.positive()),
  state: z.nullable(z.string()),
  physState: z.nullable(z.string()),
  linkLayer: z.nullable(z.string()),
  rateGbps: z.nullable(z.number().check(z.positive())),
  netdev: z.nullable(z.string()),
  gidTableLength: z.number().check(z.int(), z.gte(0)),
  gids: z.array(gidEntrySchema),
});

export const containerSchema = z.enum(['docker', 'podman']);

export const rdmaFactsSchema = z.object({
  devices: z.array(
    z.object({
      name: z.string().check(z.minLength(1)),
      verbs: z.nullable(z.string()),
      driver: z.optional(z.nullable(z.string())),
      ports: z.array(rdmaPortSchema),
    }),
  ),
  deviceFiles: z.array(z.string()),
});

export const ncclConfSchema = z.array(z.object({ file: z.string(), text: z.string() }));

export const netPluginSchema = z.nullable(
  z.object({
    name: z.string(),
    path: z.string(),
    via: z.enum(['path', 'LD_LIBRARY_PATH', 'RUNPATH', 'ld.so.cache', 'system folder']),
    realPath: z.string(),
    kind: z.enum(NET_PLUGIN_KIND_IDS),
    version: z.nullable(z.string()),
  }),
);

export const hostFactsSchema = z.object({
  hostname: z.string(),
  interfaces: z.array(interfaceFactsSchema),
  routes: z.array(routeEntrySchema),
  rdma: z.optional(rdmaFactsSchema),
  portRange: z.optional(
    z.tuple([
      z.number().check(z.int(), z.gte(1), z.lte(65_535)),
      z.number().check(z.int(), z.gte(1), z.lte(65_535)),
    ]),
  ),
  container: z.optional(z.nullable(containerSchema)),
  unread: z.optional(z.array(z.string())),
  resolved: z.optional(z.record(z.string(), z.array(z.string()))),
  ncclConf: z.optional(ncclConfSchema),
  netPlugin: z.optional(netPluginSchema),
}) satisfies z.ZodMiniType<HostFacts>;
