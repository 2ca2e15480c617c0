/**
 * The interfaces subnet, route and speed may pick from: usable for the family
 * and not excluded (SPEC: excludes apply to every strategy but explicit and local).
 */
import type { HostFacts, InterfaceAddress, InterfaceFacts } from '../host/host-facts.js';
import type { ExcludeRule, ResolveContext } from './decision.js';
import { describeExclude, excludedBy } from './excludes.js';
import {
  type Unusable,
  unusable,
  unusablePredicate,
  unusableText,
  usableAddresses,
} from './usable.js';

export interface Candidate {
  iface: InterfaceFacts;
  addresses: InterfaceAddress[];
}

/**
 * SPEC "Causes users meet": a VPN through which the master is reached is the
 * job's network. Its default excludes give way in `subnet` and `route` (the
 * strategies that find the master's network), never in `speed`, and never a
 * prefix the user named in --exclude.
 */
export const VPN_PREFIXES: readonly string[] = ['tailscale', 'wg', 'zt', 'tun', 'tap'];

/** The context `subnet` and `route` judge interfaces by: the default VPN excludes dropped. */
export function reachContext(context: ResolveContext): ResolveContext {
  const excludes = context.excludes.filter((rule) => !isDefaultVpnRule(rule));
  return excludes.length === context.excludes.length ? context : { ...context, excludes };
}

function isDefaultVpnRule(rule: ExcludeRule): boolean {
  return rule.kind === 'prefix' && rule.byDefault === true && VPN_PREFIXES.includes(rule.value);
}

/** The default VPN prefix an interface's name begins with, if excluded by it in `context`. */
export function vpnPrefix(name: string, context: ResolveContext): string | null {
  const rule = context.excludes.find(
    (candidate) =>
      isDefaultVpnRule(candidate) && name.startsWith((candidate as { value: string }).value),
  );
  return rule?.kind === 'prefix' ? rule.value : null;
}

/** Why an interface is not a candidate: excluded by a rule, or unusable. */
export type Rejection = Unusable | { kind: 'excluded'; rule: ExcludeRule };

/**
 * Why the interface is not a candidate, or null. What it is (loopback, a
 * bond member) comes before an exclude rule that also matches it, as in
 * explain's verdicts.
 */
export function rejection(iface: InterfaceFacts, context: ResolveContext): Rejection | null {
  if (iface.kind === 'loopback' || iface.kind === 'bond-member')
    return unusable(iface, context.family);
  const rule = excludedBy(iface, context.excludes);
  if (rule !== null) return { kind: 'excluded', rule };
  return unusable(iface, context.family);
}

/** The rejection in words: "excluded (prefix docker)", "down", "no IPv4 address". */
export function rejectionText(why: Rejection): string {
  return why.kind === 'excluded' ? `excluded (${describeExclude(why.rule)})` : unusableText(why);
}

export function candidates(facts: HostFacts, context: ResolveContext): Candidate[] {
  return facts.interfaces
    .filter((iface) => rejection(iface, context) === null)
    .map((iface) => ({ iface, addresses: usableAddresses(iface, context.family) }));
}

/** A rejection as a predicate after the interface's name: "is down", "has no IPv4 address". */
export function predicate(why: Rejection): string {
  return why.kind === 'excluded' ? `is ${rejectionText(why)}` : unusablePredicate(why);
}
