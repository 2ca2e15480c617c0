/**
 * What nccl-run knows about this host's network: read once (read-host-facts.ts)
 * or replayed from a snapshot (`--facts`, facts-file.ts). Strategies only ever
 * see this value, never the OS.
 */
import type { LibraryVia } from './find-library.js';

export type Family = 'ipv4' | 'ipv6';

export type InterfaceKind =
  | 'loopback'
  | 'physical'
  | 'bond'
  | 'bond-member'
  | 'bridge'
  | 'veth'
  | 'vlan'
  | 'macvlan'
  | 'tunnel'
  | 'infiniband'
  | 'other-virtual';

export interface InterfaceAddress {
  address: string;
  family: Family;
  prefixLength: number;
  /** host (loopback), link (link-local), global. */
  scope: 'host' | 'link' | 'global';
}

export interface RdmaDevice {
  /** e.g. mlx5_0 */
  device: string;
  port: number | null;
  /** e.g. ACTIVE, DOWN; null when unknown */
  state: string | null;
}

export interface InterfaceFacts {
  name: string;
  /** /sys/class/net/IF/operstate; null when unreadable. */
  operstate: string | null;
  /** /sys/class/net/IF/carrier; null when unreadable (it is, while the link is down). */
  carrier: boolean | null;
  addresses: InterfaceAddress[];
  /** Mb/s; null when unknown (virtual links, -1 in sysfs). */
  speedMbps: number | null;
  mtu: number | null;
  kind: InterfaceKind;
  /** The bond or bridge this interface is enslaved to, if any. */
  master: string | null;
  rdma: RdmaDevice | null;
  /** Its PCI vendor (/sys/class/net/IF/device/vendor: 0x1ae0 Google gVNIC); absent for virtual links and older snapshots. */
  vendor?: string;
}

/** One entry of the kernel's routing table, as read from `ip -j route` or /proc. */
export interface RouteEntry {
  family: Family;
  /** Destination network address, e.g. 198.18.0.0 or :: (default). */
  destination: string;
  prefixLength: number;
  interface: string;
  gateway: string | null;
  metric: number;
  /** 'local' for the kernel's own addresses (table local), 'unicast' otherwise. */
  type: 'unicast' | 'local';
}

/**
 * One entry of a port's GID table (ports/N/gids/I, gid_attrs/types/I and
 * gid_attrs/ndevs/I in Documentation/ABI/stable/sysfs-class-infiniband).
 * Empty slots, which the kernel prints as all zeros, are left out.
 */
export interface GidEntry {
  index: number;
  /** As sysfs prints it (%pI6): eight groups of four hex digits. */
  gid: string;
  /** "IB/RoCE v1" or "RoCE v2"; null when unreadable. */
  type: string | null;
  /** The netdev the GID belongs to (RoCE); null for InfiniBand GIDs. */
  netdev: string | null;
}

/** One port of an RDMA device (/sys/class/infiniband/DEV/ports/N). */
export interface RdmaPortFacts {
  port: number;
  /** ACTIVE, DOWN, INIT, ... (ports/N/state without its number); null when unreadable. */
  state: string | null;
  /** LinkUp, Polling, Disabled, ... (ports/N/phys_state without its number). */
  physState: string | null;
  /** InfiniBand, Ethernet (RoCE), or Unknown (EFA and other unspecified link layers). */
  linkLayer: string | null;
  /** ports/N/rate in Gb/s: 200 for "200 Gb/sec (4X HDR)". */
  rateGbps: number | null;
  /** The netdev behind the port (RoCE: GID 0's netdev; IPoIB: by dev_port). */
  netdev: string | null;
  /** How many slots the GID table has (ports/N/gids lists one file per slot). */
  gidTableLength: number;
  gids: GidEntry[];
}

export interface RdmaDeviceFacts {
  /** e.g. mlx5_0 */
  name: string;
  /** Its verbs character device, e.g. uverbs0 (infiniband_verbs/uverbsN/ibdev); null without ib_uverbs. */
  verbs: string | null;
  /** Its kernel driver (device/driver's link name: mlx5_core, efa, ...); absent from older snapshots. */
  driver?: string | null;
  ports: RdmaPortFacts[];
}

/** What NCCL's IB transport can find here (SPEC "RDMA transport"). */
export interface RdmaFacts {
  devices: RdmaDeviceFacts[];
  /** The entries of /dev/infiniband that exist (uverbs0, rdma_cm, ...); none in a container started without them. */
  deviceFiles: string[];
}

export interface HostFacts {
  hostname: string;
  /**
   * In the kernel's order (ifindex), each with its addresses in the kernel's
   * order within a family (IPv4: primaries as added, then secondaries; IPv6: by scope,
   * newest first): getifaddrs' order, by which NCCL picks (nccl/nccl-pick.ts).
   */
  interfaces: InterfaceFacts[];
  /** The routing table; used to answer "which interface reaches X" when replaying a snapshot. */
  routes: RouteEntry[];
  /** Absent from snapshots taken before nccl-run read RDMA devices: then none are known. */
  rdma?: RdmaFacts;
  /**
   * net.ipv4.ip_local_port_range of this network namespace, [low, high]: the
   * ports NCCL's and Gloo's listeners (port 0) come from. Absent where
   * unreadable, and from snapshots taken before nccl-run read it.
   */
  portRange?: [number, number];
  /**
   * The container engine this host is a container of, by the file it leaves
   * (Docker's /.dockerenv, podman's /run/.containerenv); null on a host;
   * absent from older snapshots (then unknown).
   */
  container?: ContainerEngine | null;
  /**
   * The names the decision resolved on this host (its hostname, the master,
   * MASTER_ADDR, NCCL_COMM_ID's host), each to its addresses in getaddrinfo's
   * order, as that host saw them: a `--facts` replay reads them from here,
   * never from the machine it runs on. Absent from older snapshots.
   */
  resolved?: Record<string, string[]>;
  /** What could not be read on this host (`/sys/class/net` in a bare chroot); absent when all was. */
  unread?: string[];
  /**
   * NCCL's configuration files as read on this host, in NCCL's order
   * (nccl/nccl-conf.ts; only those that exist): a `--facts` replay parses
   * these, never the replaying machine's files. Absent from older snapshots.
   */
  ncclConf?: NcclConfFile[];
  /**
   * The net plugin NCCL would load, as found on this host
   * (transport/find-net-plugin.ts); null where none was. A `--facts`
   * replay takes it from here. Absent from older snapshots.
   */
  netPlugin?: NetPluginRecord | null;
}

/** One of NCCL's configuration files and its text, as read. */
export interface NcclConfFile {
  file: string;
  text: string;
}

/** The net plugins nccl-run tells apart (transport/net-plugin-kinds.ts describes each). */
export const NET_PLUGIN_KIND_IDS = ['aws-ofi-nccl', 'gpudirect-tcpx', 'tcpxo', 'other'] as const;
export type NetPluginKindId = (typeof NET_PLUGIN_KIND_IDS)[number];

/** A found net plugin, its kind by id (transport/net-plugin-kinds.ts). */
export interface NetPluginRecord {
  name: string;
  path: string;
  via: LibraryVia;
  realPath: string;
  kind: NetPluginKindId;
  version: string | null;
}

export type ContainerEngine = 'docker' | 'podman';

/** The kernel's answer to "how do I reach this address". */
export interface RouteAnswer {
  destination: string;
  interface: string;
  /** Preferred source address, when the kernel says. */
  source: string | null;
  gateway: string | null;
  type: 'unicast' | 'local';
}
