/**
 * `ip -j -d addr show`: the one source that has every address of every
 * interface (down ones included, which os.networkInterfaces() omits) and the
 * kernel's link kind (IFLA_INFO_KIND: veth, macvlan, vxlan...), which sysfs
 * only exposes for some drivers (uevent DEVTYPE).
 */
import * as z from 'zod/mini';
import type { InterfaceAddress } from './host-facts.js';
import { addressScope, familyOf } from './ip-address.js';

export interface IpLink {
  name: string;
  /** The kernel's index: the order getifaddrs lists links in. */
  ifindex: number | null;
  /** IFLA_INFO_KIND; null for a plain NIC, which has no rtnl_link_ops. */
  kind: string | null;
  /** IFLA_INFO_SLAVE_KIND: the kind of the master this interface is enslaved to (bond, bridge, team). */
  slaveKind: string | null;
  addresses: InterfaceAddress[];
}

const ipLinkSchema = z.looseObject({
  ifindex: z.optional(z.number()),
  ifname: z.string(),
  linkinfo: z.optional(
    z.looseObject({
      info_kind: z.optional(z.string()),
      info_slave_kind: z.optional(z.string()),
    }),
  ),
  addr_info: z.optional(
    z.array(z.looseObject({ local: z.optional(z.string()), prefixlen: z.optional(z.number()) })),
  ),
});

export function parseIpAddrShow(json: unknown): IpLink[] {
  if (!Array.isArray(json)) return [];
  const links: IpLink[] = [];
  for (const entry of json) {
    const parsed = ipLinkSchema.safeParse(entry);
    if (!parsed.success) continue;
    const { ifindex, ifname, linkinfo, addr_info } = parsed.data;
    links.push({
      name: ifname,
      ifindex: ifindex ?? null,
      kind: linkinfo?.info_kind ?? null,
      slaveKind: linkinfo?.info_slave_kind ?? null,
      addresses: (addr_info ?? []).flatMap(toInterfaceAddress),
    });
  }
  return links;
}

function toInterfaceAddress(info: { local?: string; prefixlen?: number }): InterfaceAddress[] {
  if (info.local === undefined || info.prefixlen === undefined) return [];
  const family = familyOf(info.local);
  if (family === null) return [];
  return [
    {
      address: info.local,
      family,
      prefixLength: info.prefixlen,
      scope: addressScope(info.local),
    },
  ];
}
