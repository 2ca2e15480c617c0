/**
 * Which transport NCCL 2.22's data goes over, and why (SPEC "RDMA
 * transport"): the IB transport (InfiniBand or RoCE) when it finds a port,
 * else sockets. ncclIbInit (src/transport/net_ib.cc, v2.22.3-1) is off under
 * NCCL_IB_DISABLE; it lists the devices libibverbs can open (no uverbs
 * device file: none) and keeps each port that is ACTIVE, has link layer
 * InfiniBand or Ethernet, and NCCL_IB_HCA selects, up to MAX_IB_DEVS. With no
 * port it reports no device and ncclNetInit (src/net.cc) takes the next
 * network, sockets, unless NCCL_NET names one (then NCCL fails instead).
 * nccl-run never chooses HCAs: NCCL's own multi-rail choice stands.
 */
import type { RdmaDeviceFacts, RdmaFacts, RdmaPortFacts } from '../host/host-facts.js';
import { ncclIfnameMatches } from '../nccl/nccl-ifname.js';
import { gidAddress, gidWords } from './gid.js';
import { ncclGidIndex } from './gid-index.js';
import { MAX_IB_DEVS, parseIbHca } from './ib-hca.js';
import { type IbSettings, netExcludesIb } from './ib-settings.js';

export type TransportKind = 'ib' | 'roce' | 'efa' | 'plugin' | 'socket';

/** One port as the verdict reports it: its facts (host-facts.ts), and what NCCL makes of it. */
export interface TransportPort
  extends Pick<
    RdmaPortFacts,
    'port' | 'state' | 'physState' | 'linkLayer' | 'rateGbps' | 'netdev'
  > {
  /** The device, e.g. mlx5_0. */
  name: string;
  /** The GID NCCL uses on this port (gid-index.ts); null where the IB transport cannot use the port's link layer. */
  gidIndex: number | null;
  /** That GID's address, and its type; null when the slot is empty. */
  gid: string | null;
  gidType: string | null;
  /** Whether NCCL's IB transport takes this port. */
  used: boolean;
  /** Why it does not; null when used. */
  skipped: string | null;
}

export interface TransportVerdict {
  kind: TransportKind;
  reason: string;
  devices: TransportPort[];
  /** Whether any /dev/infiniband/uverbs* exists here. */
  deviceFiles: boolean;
  /** No port, and NCCL_NET names IB: NCCL fails ("network IB not found") instead of running on sockets. */
  ncclFails: boolean;
}

const IB_LINK_LAYERS = new Set(['InfiniBand', 'Ethernet']);

export function transportVerdict(rdma: RdmaFacts, settings: IbSettings): TransportVerdict {
  const deviceFiles = rdma.deviceFiles.some((name) => name.startsWith('uverbs'));
  const off = ibTransportOff(settings);
  const hca = settings.hca === null ? null : parseIbHca(settings.hca);
  const devices: TransportPort[] = [];
  for (const device of rdma.devices) {
    const closed = off ?? unopenable(device, rdma.deviceFiles);
    for (const port of device.ports) {
      const skipped =
        closed ??
        portSkipped(port) ??
        (hca === null || ncclIfnameMatches(hca, device.name, port.port)
          ? null
          : `not selected by NCCL_IB_HCA=${settings.hca}`) ??
        (devices.filter((entry) => entry.used).length < MAX_IB_DEVS
          ? null
          : `past NCCL's ${MAX_IB_DEVS} IB devices`);
      devices.push(transportPort(device, port, settings, skipped));
    }
  }
  const used = devices.filter((entry) => entry.used);
  if (used.length > 0) {
    return {
      kind: used.some((entry) => entry.linkLayer === 'InfiniBand') ? 'ib' : 'roce',
      reason: `NCCL's IB transport finds ${used.map(portLabel).join(', ')}`,
      devices,
      deviceFiles,
      ncclFails: false,
    };
  }
  return {
    kind: 'socket',
    reason: off ?? noPortReason(rdma, devices),
    devices,
    deviceFiles,
    // ncclNetInit with NCCL_NET=IB: no enabled network of that name, "Error: network IB not found".
    ncclFails: settings.net !== null && !netExcludesIb(settings),
  };
}

/** "mlx5_0:1", as NCCL names a device port in its "NET/IB : Using" line. */
export function portLabel(port: { name: string; port: number }): string {
  return `${port.name}:${port.port}`;
}

/** Why NCCL's IB transport is off altogether, or null. */
export function ibTransportOff(settings: IbSettings): string | null {
  if (netExcludesIb(settings)) return `NCCL_NET=${settings.net} leaves NCCL's IB transport out`;
  if (settings.disabledBy !== null)
    return `NCCL_IB_DISABLE=${settings.disabledBy} turns NCCL's IB transport off`;
  return null;
}

/** rdma-core lists a device only with its uverbs device file (host/rdma-device-files.ts). */
function unopenable(device: RdmaDeviceFacts, deviceFiles: readonly string[]): string | null {
  if (device.verbs === null)
    return 'no uverbs device in /sys/class/infiniband_verbs (ib_uverbs not loaded)';
  return deviceFiles.includes(device.verbs) ? null : `no /dev/infiniband/${device.verbs}`;
}

/** Why NCCL passes a port over for its own state: not ACTIVE, or a link layer it does not use. */
export function portSkipped(port: RdmaPortFacts): string | null {
  if (port.state !== 'ACTIVE') return `port ${port.state ?? 'state unknown'}`;
  if (!IB_LINK_LAYERS.has(port.linkLayer ?? '')) return `link layer ${port.linkLayer ?? 'unknown'}`;
  return null;
}

function transportPort(
  device: RdmaDeviceFacts,
  port: RdmaPortFacts,
  settings: IbSettings,
  skipped: string | null,
): TransportPort {
  const gidIndex = IB_LINK_LAYERS.has(port.linkLayer ?? '') ? ncclGidIndex(port, settings) : null;
  const entry = port.gids.find((gid) => gid.index === gidIndex);
  return {
    name: device.name,
    port: port.port,
    state: port.state,
    physState: port.physState,
    linkLayer: port.linkLayer,
    rateGbps: port.rateGbps,
    netdev: port.netdev,
    gidIndex,
    gid: entry === undefined ? null : gidAddress(gidWords(entry.gid)),
    gidType: entry?.type ?? null,
    used: skipped === null,
    skipped,
  };
}

function noPortReason(rdma: RdmaFacts, ports: readonly TransportPort[]): string {
  if (rdma.devices.length === 0) return 'no RDMA devices in /sys/class/infiniband';
  const closed = rdma.devices.map((device) => unopenable(device, rdma.deviceFiles));
  if (closed.every((reason) => reason !== null)) {
    const verbsKnown = rdma.devices.every((device) => device.verbs !== null);
    if (verbsKnown && !rdma.deviceFiles.some((name) => name.startsWith('uverbs'))) {
      return 'no /dev/infiniband in this container';
    }
    return rdma.devices.map((device, i) => `${device.name}: ${closed[i]}`).join(', ');
  }
  const skipped = ports.filter((port) => port.skipped !== null);
  return skipped.length === 0
    ? 'the RDMA devices have no ports'
    : `no port NCCL can use: ${skipped.map((port) => `${portLabel(port)} ${port.skipped}`).join(', ')}`;
}
