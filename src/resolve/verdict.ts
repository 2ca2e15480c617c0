import type { HostFacts } from '../host/host-facts.js';
import { rejection } from './candidates.js';
import type { Decision, ResolveContext } from './decision.js';

/**
 * One word or phrase per interface for explain's table: chosen, usable,
 * excluded (prefix docker), down, no IPv4 address, link-local only, bond
 * member of bond0, loopback. The same words the strategies give as reasons.
 */
export function interfaceVerdicts(
  facts: HostFacts,
  context: ResolveContext,
  decision: Decision | null,
): Map<string, string> {
  const verdicts = new Map<string, string>();
  for (const iface of facts.interfaces) {
    const verdict =
      decision?.interface === iface.name ? 'chosen' : (rejection(iface, context) ?? 'usable');
    verdicts.set(iface.name, verdict);
  }
  return verdicts;
}
