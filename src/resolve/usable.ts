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
  if (unusable(iface, family) !== null) return [];
  return iface.addresses.filter((a) => a.family === family && isRoutableAddress(a));
}

export function usableAddress(iface: InterfaceFacts, family: Family): InterfaceAddress | null {
  return usableAddresses(iface, family)[0] ?? null;
}

/** Why an interface cannot carry the job: a kind, with what its words need. */
export type Unusable =
  | { kind: 'bond member'; bond: string | null }
  | { kind: 'loopback' }
  /** `how`: down, down (no carrier), down (operstate lowerlayerdown). */
  | { kind: 'down'; how: string }
  | { kind: 'no address'; family: Family }
  | { kind: 'link-local only' }
  | { kind: 'loopback or link-local only'; family: Family };

/** Why the interface cannot carry the job; null when it is usable. */
export function unusable(iface: InterfaceFacts, family: Family): Unusable | null {
  if (iface.kind === 'bond-member') return { kind: 'bond member', bond: iface.master };
  if (iface.kind === 'loopback') return { kind: 'loopback' };
  if (!isUp(iface)) return { kind: 'down', how: downReason(iface) };
  const ofFamily = iface.addresses.filter((a) => a.family === family);
  if (ofFamily.length === 0) return { kind: 'no address', family };
  if (ofFamily.some(isRoutableAddress)) return null;
  if (ofFamily.every((a) => a.scope === 'link' || isLinkLocalAddress(a.address)))
    return { kind: 'link-local only' };
  return { kind: 'loopback or link-local only', family };
}

/** The reason as a phrase that reads after the interface's name ("ens2f0: down (no carrier)"). */
export function unusableText(why: Unusable): string {
  switch (why.kind) {
    case 'bond member':
      return `bond member of ${why.bond ?? 'a bond'}`;
    case 'loopback':
    case 'link-local only':
      return why.kind;
    case 'down':
      return why.how;
    case 'no address':
      return `no ${familyLabel(why.family)} address`;
    case 'loopback or link-local only':
      return `no usable ${familyLabel(why.family)} address (loopback or link-local only)`;
  }
}

/** The reason as a predicate after the interface's name: "is down", "has no IPv4 address". */
export function unusablePredicate(why: Unusable): string {
  switch (why.kind) {
    case 'no address':
    case 'loopback or link-local only':
      return `has ${unusableText(why)}`;
    case 'bond member':
      return `is a ${unusableText(why)}`;
    default:
      return `is ${unusableText(why)}`;
  }
}
