/**
 * What kind of link an interface is, from the kernel's own markers.
 *
 * The kernel names a link's kind in IFLA_INFO_KIND (rtnl_link_ops->kind,
 * `ip -d link`): veth, bridge, bond, vlan, macvlan, vxlan... A plain NIC has
 * no rtnl_link_ops and so no kind. sysfs exposes only part of it:
 *  - uevent DEVTYPE, set by drivers that call SET_NETDEV_DEVTYPE (bridge, bond,
 *    vlan, vxlan, geneve, wireguard, wlan), not by veth or macvlan;
 *  - `type`, the ARPHRD_* hardware type (772 loopback, 32 InfiniBand, 768+ IP
 *    tunnels, 65534 "none" for tun and wireguard);
 *  - `device`, the bus device behind a real NIC (PCI, virtio, USB);
 *  - `bonding/` on a bond, `bonding_slave/` on its members, `bridge/` on a
 *    bridge, `tun_flags` on tun/tap, `lower_*` links on stacked devices
 *    (macvlan, vlan) whose lower device is in the same namespace;
 *  - `iflink` != `ifindex` when the link rides on or pairs with another one
 *    (veth's peer, macvlan's lower device).
 * So the ip kind wins when iproute2 answered; sysfs alone cannot tell a veth
 * from a macvlan whose lower device lives in another namespace, and calls both veth.
 *
 * Nor can it tell a veth whose peer, in another namespace, has the very same
 * ifindex (iflink is the peer's index in the peer's own namespace,
 * drivers/net/veth.c veth_get_iflink): that one reads other-virtual. The
 * veth driver names itself only over sockets (rtnl_link_ops.kind for
 * IFLA_INFO_KIND, ethtool's get_drvinfo "veth"), sets no DEVTYPE and adds no
 * attribute: on kernel 6.18 a veth's sysfs directory lists what a macvlan's
 * does, speed 10000 included. Engines do not meet the case: Docker makes both
 * ends in the host's namespace and moves one, which keeps its index unless
 * taken (net/core/dev.c __dev_change_net_namespace), so eth0's iflink is the
 * next index (4 and 5 in the Docker tier); netavark makes eth0 in the
 * container's fresh namespace (2, 3) and its peer in the host's, whose
 * counter has passed lo, the bridge and every earlier peer (iflink 3 to 13
 * under podman 4.3). Only indexes asked for (`ip link add ... index N`) made
 * the two equal here.
 */
import type { InterfaceKind } from './host-facts.js';

export interface SysfsKindSignals {
  /** ARPHRD_* from /sys/class/net/IF/type. */
  arphrdType: number | null;
  /** DEVTYPE from /sys/class/net/IF/uevent. */
  devtype: string | null;
  hasDevice: boolean;
  hasBonding: boolean;
  hasBondingSlave: boolean;
  hasBridge: boolean;
  hasTunFlags: boolean;
  hasLower: boolean;
  /** iflink differs from ifindex. */
  ridesOnOther: boolean;
}

export interface KindSignals extends SysfsKindSignals {
  /** IFLA_INFO_KIND, when iproute2 answered; null for a plain NIC or without ip. */
  linkKind: string | null;
  /** IFLA_INFO_SLAVE_KIND: the kind of this interface's master (bond, team, bridge). */
  slaveKind: string | null;
}

/** include/uapi/linux/if_arp.h */
const ARPHRD_INFINIBAND = 32;
const ARPHRD_LOOPBACK = 772;
const ARPHRD_TUNNELS = new Set([
  768, // ARPHRD_TUNNEL (ipip)
  769, // ARPHRD_TUNNEL6 (ip6tnl)
  776, // ARPHRD_SIT
  778, // ARPHRD_IPGRE
  823, // ARPHRD_IP6GRE
  65534, // ARPHRD_NONE (tun, wireguard)
]);

/** rtnl_link_ops kinds (drivers/net, net/ipv4, net/ipv6) grouped into the product's kinds. */
const KIND_OF_LINK: Record<string, InterfaceKind> = {
  bond: 'bond',
  team: 'bond',
  bridge: 'bridge',
  veth: 'veth',
  vlan: 'vlan',
  macvlan: 'macvlan',
  macvtap: 'macvlan',
  ipoib: 'infiniband',
  vxlan: 'tunnel',
  geneve: 'tunnel',
  bareudp: 'tunnel',
  gre: 'tunnel',
  gretap: 'tunnel',
  ip6gre: 'tunnel',
  ip6gretap: 'tunnel',
  erspan: 'tunnel',
  ip6erspan: 'tunnel',
  ipip: 'tunnel',
  sit: 'tunnel',
  ip6tnl: 'tunnel',
  vti: 'tunnel',
  vti6: 'tunnel',
  xfrm: 'tunnel',
  gtp: 'tunnel',
  wireguard: 'tunnel',
  tun: 'tunnel',
};

const TUNNEL_DEVTYPES = new Set(['vxlan', 'geneve', 'wireguard', 'bareudp']);

/** Bond and team members carry their master's traffic, never their own (SPEC "Usable"). */
const BONDING_MASTER_KINDS = new Set(['bond', 'team']);

export function interfaceKind(signals: KindSignals): InterfaceKind {
  if (signals.arphrdType === ARPHRD_LOOPBACK) return 'loopback';
  if (
    signals.hasBondingSlave ||
    (signals.slaveKind !== null && BONDING_MASTER_KINDS.has(signals.slaveKind))
  ) {
    return 'bond-member';
  }
  const fromLink = signals.linkKind === null ? undefined : KIND_OF_LINK[signals.linkKind];
  if (fromLink !== undefined) return fromLink;
  if (signals.arphrdType === ARPHRD_INFINIBAND) return 'infiniband';
  if (signals.hasBonding || signals.devtype === 'bond') return 'bond';
  if (signals.hasBridge || signals.devtype === 'bridge') return 'bridge';
  if (signals.devtype === 'vlan') return 'vlan';
  if (
    (signals.devtype !== null && TUNNEL_DEVTYPES.has(signals.devtype)) ||
    signals.hasTunFlags ||
    (signals.arphrdType !== null && ARPHRD_TUNNELS.has(signals.arphrdType))
  ) {
    return 'tunnel';
  }
  if (signals.hasDevice) return 'physical';
  // Any other kind iproute2 named (dummy, ifb, vrf, ipvlan, nlmon...) is a
  // software device that is none of the above.
  if (signals.linkKind !== null) return 'other-virtual';
  if (signals.ridesOnOther && signals.hasLower) return 'macvlan';
  if (signals.ridesOnOther && signals.arphrdType === 1) return 'veth';
  return 'other-virtual';
}
