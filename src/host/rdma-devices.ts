/**
 * The RDMA device behind each network interface (SPEC: "the RDMA device behind
 * it if any": the netdevs listed under /sys/class/infiniband/DEV/device/net), with the port that
 * carries it and that port's state (ports/N/state reads "4: ACTIVE").
 *
 * Which port belongs to which netdev (drivers/infiniband/core/sysfs.c):
 * a RoCE port names its netdev in ports/N/gid_attrs/ndevs/0; otherwise a
 * device with one port has only that one, and a multi-port device shared by
 * one PCI function (mlx4) numbers its netdevs by dev_port, 0-based.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RdmaDevice } from './host-facts.js';

export async function readRdmaDevices(sysRoot: string): Promise<Map<string, RdmaDevice>> {
  const classDir = join(sysRoot, 'class/infiniband');
  const devices = await readdir(classDir).catch(() => []);
  const perDevice = await Promise.all(devices.map((device) => readRdmaDevice(classDir, device)));
  return new Map(perDevice.flat());
}

async function readRdmaDevice(
  classDir: string,
  device: string,
): Promise<Array<[string, RdmaDevice]>> {
  const deviceDir = join(classDir, device);
  const [netdevs, portNames] = await Promise.all([
    readdir(join(deviceDir, 'device/net')).catch(() => []),
    readdir(join(deviceDir, 'ports')).catch(() => []),
  ]);
  const ports = portNames.map(Number).filter(Number.isInteger);
  const roceNetdevs = await Promise.all(
    ports.map((port) => readText(join(deviceDir, 'ports', String(port), 'gid_attrs/ndevs/0'))),
  );
  return Promise.all(
    netdevs.map(async (netdev): Promise<[string, RdmaDevice]> => {
      const port = await portOf(netdev, ports, roceNetdevs, join(deviceDir, 'device/net', netdev));
      const state =
        port === null ? null : await readText(join(deviceDir, 'ports', String(port), 'state'));
      return [netdev, { device, port, state: state === null ? null : portState(state) }];
    }),
  );
}

async function portOf(
  netdev: string,
  ports: number[],
  roceNetdevs: Array<string | null>,
  netdevDir: string,
): Promise<number | null> {
  const roce = roceNetdevs.indexOf(netdev);
  if (roce !== -1) return ports[roce] ?? null;
  if (ports.length === 1) return ports[0] ?? null;
  const devPort = await readText(join(netdevDir, 'dev_port'));
  const port = devPort !== null && /^\d+$/.test(devPort) ? Number(devPort) + 1 : null;
  return port !== null && ports.includes(port) ? port : null;
}

/** "4: ACTIVE" → "ACTIVE" (ib_port_state names, as ibstat prints them). */
function portState(text: string): string {
  return text.replace(/^\d+:\s*/, '');
}

async function readText(path: string): Promise<string | null> {
  return readFile(path, 'utf8').then(
    (text) => text.trim(),
    () => null,
  );
}
