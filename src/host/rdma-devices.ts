/**
 * The RDMA devices in /sys/class/infiniband, as NCCL's IB transport will see
 * them (SPEC "RDMA transport"), and the device and port behind each netdev
 * (SPEC: "the RDMA device behind it if any": the netdevs listed under
 * /sys/class/infiniband/DEV/device/net).
 *
 * Per port (Documentation/ABI/stable/sysfs-class-infiniband; the text formats
 * are drivers/infiniband/core/sysfs.c's): state "4: ACTIVE", phys_state
 * "5: LinkUp", link_layer "InfiniBand" | "Ethernet" | "Unknown", rate
 * "200 Gb/sec (4X HDR)", and the GID table (rdma-gids.ts).
 *
 * Which port belongs to which netdev: a RoCE port names its netdev in
 * ports/N/gid_attrs/ndevs/0; otherwise a device with one port has only that
 * one, and a multi-port device shared by one PCI function (mlx4) numbers its
 * netdevs by dev_port, 0-based.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { attempt } from './attempt.js';
import type { RdmaDevice, RdmaDeviceFacts, RdmaPortFacts } from './host-facts.js';
import { compareNames } from './name-order.js';
import { readGidTable } from './rdma-gids.js';
import { readSysfsText } from './sysfs-text.js';

/** GID 0 and NCCL_IB_ROUTABLE_FLID_GID_INDEX's default, 1 (rdma-gids.ts). */
const IB_GID_SLOTS = 2;

export interface RdmaDevices {
  devices: RdmaDeviceFacts[];
  /** netdev → the device and port behind it (InterfaceFacts.rdma). */
  byNetdev: Map<string, RdmaDevice>;
}

/** verbs: each device's uverbs character device (rdma-device-files.ts readVerbsDevices). */
export function readRdmaDevices(sysRoot: string, verbs: ReadonlyMap<string, string>): RdmaDevices {
  const classDir = join(sysRoot, 'class/infiniband');
  const read = (attempt(() => readdirSync(classDir)) ?? [])
    .sort(compareNames)
    .map((name) => readDevice(join(classDir, name), name, verbs.get(name) ?? null));
  return {
    devices: read.map((entry) => entry.device),
    byNetdev: new Map(read.flatMap((entry) => entry.netdevs)),
  };
}

function readDevice(
  dir: string,
  name: string,
  verbs: string | null,
): { device: RdmaDeviceFacts; netdevs: Array<[string, RdmaDevice]> } {
  const netdevs = (attempt(() => readdirSync(join(dir, 'device/net'))) ?? []).sort(compareNames);
  const devPorts = new Map(
    netdevs.map((netdev) => [netdev, devPortOf(join(dir, 'device/net', netdev))]),
  );
  const numbers = (attempt(() => readdirSync(join(dir, 'ports'))) ?? [])
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .sort((a, b) => a - b);
  const roceNetdevs = new Map(
    numbers.map((port) => [
      port,
      readSysfsText(join(dir, 'ports', String(port), 'gid_attrs/ndevs/0')),
    ]),
  );
  const portOf = (netdev: string): number | null => {
    const roce = [...roceNetdevs].find(([, roceNetdev]) => roceNetdev === netdev);
    if (roce) return roce[0];
    if (numbers.length === 1) return numbers[0] ?? null;
    const devPort = devPorts.get(netdev);
    return devPort != null && numbers.includes(devPort + 1) ? devPort + 1 : null;
  };
  const ports = numbers.map((port) =>
    readPort(
      join(dir, 'ports', String(port)),
      port,
      roceNetdevs.get(port) ?? netdevs.find((netdev) => portOf(netdev) === port) ?? null,
    ),
  );
  return {
    // The PCI function's driver: `efa` for AWS EFA (drivers/infiniband/hw/efa), mlx5_core, ...
    device: {
      name,
      verbs,
      driver: attempt(() => basename(readlinkSync(join(dir, 'device/driver')))) ?? null,
      ports,
    },
    netdevs: netdevs.map((netdev): [string, RdmaDevice] => {
      const port = portOf(netdev);
      const state = ports.find((entry) => entry.port === port)?.state ?? null;
      return [netdev, { device: name, port, state }];
    }),
  };
}

function readPort(dir: string, port: number, netdev: string | null): RdmaPortFacts {
  const read = (attribute: string) => readSysfsText(join(dir, attribute));
  const linkLayer = read('link_layer');
  // RoCE: the whole table, which NCCL's GID choice walks; otherwise the slots NCCL reads.
  const table = readGidTable(dir, linkLayer === 'Ethernet' ? undefined : IB_GID_SLOTS);
  return {
    port,
    state: withoutNumber(read('state')),
    physState: withoutNumber(read('phys_state')),
    linkLayer,
    rateGbps: rateOf(read('rate')),
    netdev,
    gidTableLength: table.length,
    gids: table.gids,
  };
}

/** "4: ACTIVE" → "ACTIVE", "5: LinkUp" → "LinkUp" (state_show, phys_state_show: "%u: %s"). */
function withoutNumber(text: string | null): string | null {
  return text === null ? null : text.replace(/^\d+:\s*/, '');
}

/** rate_show: "%d%s Gb/sec (%dX%s)", the %s being ".5" or nothing: "2.5 Gb/sec (1X SDR)" → 2.5. */
function rateOf(text: string | null): number | null {
  const match = text === null ? null : /^(\d+(?:\.5)?) Gb\/sec/.exec(text);
  return match?.[1] ? Number(match[1]) || null : null;
}

function devPortOf(netdevDir: string): number | null {
  const text = readSysfsText(join(netdevDir, 'dev_port'));
  return text !== null && /^\d+$/.test(text) ? Number(text) : null;
}
