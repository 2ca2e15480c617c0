/**
 * SPEC "Usable": up, and holding an address of the wanted family that is not
 * loopback and not link-local; bond members never (their bond is).
 */
import type { Family, InterfaceAddress, InterfaceFacts } from '../host/host-facts.js';
import { isLinkLocalAddress, isLoopbackAddress } from '../host/ip-address.js';
import { downReason, isUp } from '../host/link-state.js';
import { familyLabel } from './ip-prefix.js';

/** An address another node could reach: neither loopback nor link-local, judged by value and scope. */
export function isRoutableAddress(address: InterfaceAddress): boolean {
  return (
    address.scope === 'global' &&
    !isLoopbackAddress(address.address) &&
    !isLinkLocalAddress(address.address)
  );
}

/** Every usable address of the family, in the order the interface lists them. */
export function usableAddresses(iface: InterfaceFacts, family: Family): InterfaceAddress[] {
  if (unusableReason(iface, family) !== null) return [];
  return iface.addresses.filter((a) => a.family === family && isRoutableAddress(a));
}

export function usableAddress(iface: InterfaceFacts, family: Family): InterfaceAddress | null {
  return usableAddresses(iface, family)[0] ?? null;
}

/**
 * Why the interface cannot carry the job, as a phrase that reads after its
 * name ("ens2f0: down (no carrier)"); null when it is usable.
 */
export function unusableReason(iface: InterfaceFacts, family: Family): string | null {
  if (iface.kind === 'bond-member') return `bond member of ${iface.master ?? 'a bond'}`;
  if (iface.kind === 'loopback') return 'loopback';
  if (!isUp(iface)) return downReason(iface);
  const ofFamily = iface.addresses.filter((a) => a.family === family);
  if (ofFamily.length === 0) return `no ${familyLabel(family)} address`;
  if (ofFamily.some(isRoutableAddress)) return null;
  if (ofFamily.every((a) => a.scope === 'link' || isLinkLocalAddress(a.address)))
    return 'link-local only';
  return `no usable ${familyLabel(family)} address (loopback or link-local only)`;
}
