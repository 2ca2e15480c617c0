/**
 * The interfaces subnet, route and speed may pick from: usable for the family
 * and not excluded (SPEC: excludes apply to every strategy but explicit and local).
 */
import type { HostFacts, InterfaceAddress, InterfaceFacts } from '../host/host-facts.js';
import type { ResolveContext } from './decision.js';
import { describeExclude, excludedBy } from './excludes.js';
import { unusableReason, usableAddresses } from './usable.js';

export interface Candidate {
  iface: InterfaceFacts;
  addresses: InterfaceAddress[];
}

/**
 * Why the interface is not a candidate ("excluded (prefix docker)", "down"),
 * or null. What it is (loopback, a bond member) reads before an exclude rule
 * that also matches it, as in explain's verdicts.
 */
export function rejection(iface: InterfaceFacts, context: ResolveContext): string | null {
  if (iface.kind === 'loopback' || iface.kind === 'bond-member')
    return unusableReason(iface, context.family);
  const rule = excludedBy(iface, context.excludes);
  if (rule !== null) return `excluded (${describeExclude(rule)})`;
  return unusableReason(iface, context.family);
}

export function candidates(facts: HostFacts, context: ResolveContext): Candidate[] {
  return facts.interfaces
    .filter((iface) => rejection(iface, context) === null)
    .map((iface) => ({ iface, addresses: usableAddresses(iface, context.family) }));
}

/** A rejection as a predicate after the interface's name: "is down", "has no IPv4 address". */
export function predicate(why: string): string {
  if (why.startsWith('no ')) return `has ${why}`;
  if (why.startsWith('bond member')) return `is a ${why}`;
  return `is ${why}`;
}
