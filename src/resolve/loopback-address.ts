/**
 * SPEC "Causes users meet": a routable address held only by `lo` (a /32 of a
 * BGP-unnumbered fabric, NVIDIA/nccl#1053: the node's address on `lo`, its
 * links lan0/lan1 unnumbered). NCCL binds an interface's first address
 * (nccl/nccl-pick.ts), on `lo` 127.0.0.1, so other nodes cannot reach it;
 * the fix is to give the address an interface of its own.
 */
import type { Family, HostFacts } from '../host/host-facts.js';
import { isLoopbackAddress, sameAddress } from '../host/ip-address.js';
import type { ResolveContext } from './decision.js';
import { isRoutableAddress } from './usable.js';

/** The routable address `address` when a loopback interface holds it; else null. */
export function heldByLoopback(facts: HostFacts, address: string | null): string | null {
  if (address === null) return null;
  const holder = facts.interfaces.find((iface) =>
    iface.addresses.some((held) => sameAddress(held.address, address)),
  );
  const held = holder?.addresses.find((a) => sameAddress(a.address, address));
  return holder?.kind === 'loopback' && held !== undefined && isRoutableAddress(held)
    ? held.address
    : null;
}

/** A routable address of the family on a loopback interface, if any. */
export function routableOnLoopback(facts: HostFacts, family: Family): string | null {
  for (const iface of facts.interfaces) {
    if (iface.kind !== 'loopback') continue;
    const held = iface.addresses.find((a) => a.family === family && isRoutableAddress(a));
    if (held !== undefined) return held.address;
  }
  return null;
}

/** Why `lo` cannot carry this multi-node job, and the fix; null where it can. */
export function loopbackRefusal(
  facts: HostFacts,
  context: ResolveContext,
  name: string,
): string | null {
  if (context.singleNode) return null;
  const masters = context.master?.addresses ?? [];
  const ownAddress = (address: string) =>
    facts.interfaces.some((iface) => iface.addresses.some((a) => sameAddress(a.address, address)));
  const remote = masters.find((address) => !isLoopbackAddress(address) && !ownAddress(address));
  if (remote === undefined) return null;
  const routable = routableOnLoopback(facts, context.family);
  return `${name} is this host's loopback: NCCL binds its first address, 127.0.0.1, and the master ${remote} is another host, which cannot reach it${routable === null ? '' : `; ${fixFor(routable)}`}`;
}

/** The fix for a routable address on lo: an interface of its own. */
export function fixFor(address: string): string {
  return `give ${address} an interface of its own (ip link add nccl0 type dummy; ip link set nccl0 up; ip addr add ${address}/${address.includes(':') ? 128 : 32} dev nccl0; remove it from lo) and name it with --iface nccl0`;
}
