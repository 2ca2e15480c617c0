/**
 * SPEC `speed`: RDMA-backed first, then link speed (unknown last), then
 * physical over virtual, then name. The subnet strategy breaks ties with the
 * same order.
 */
import type { InterfaceFacts, InterfaceKind } from '../host/host-facts.js';
import { compareNames } from '../host/name-order.js';

/** Kinds that are a real port (or a bond of them), as opposed to software links. */
const HARDWARE_KINDS: ReadonlySet<InterfaceKind> = new Set(['physical', 'bond', 'infiniband']);

export function compareBySpeed(a: InterfaceFacts, b: InterfaceFacts): number {
  const rdma = Number(b.rdma !== null) - Number(a.rdma !== null);
  if (rdma !== 0) return rdma;
  const speed = (b.speedMbps ?? -1) - (a.speedMbps ?? -1);
  if (speed !== 0) return speed;
  const hardware = Number(HARDWARE_KINDS.has(b.kind)) - Number(HARDWARE_KINDS.has(a.kind));
  if (hardware !== 0) return hardware;
  return compareNames(a.name, b.name);
}

export function rankBySpeed<T extends InterfaceFacts>(interfaces: readonly T[]): T[] {
  return [...interfaces].sort(compareBySpeed);
}

/** What the ranking saw, e.g. "RDMA mlx5_0, 200000 Mb/s, infiniband". */
export function describeSpeed(iface: InterfaceFacts): string {
  const parts = [];
  if (iface.rdma !== null) parts.push(`RDMA ${iface.rdma.device}`);
  parts.push(iface.speedMbps === null ? 'speed unknown' : `${iface.speedMbps} Mb/s`);
  parts.push(iface.kind);
  return parts.join(', ');
}
