import type { HostFacts } from '../host/host-facts.js';
import type { Decision, ResolveContext } from './decision.js';

/**
 * One word or phrase per interface for explain's table: chosen, usable,
 * excluded (docker), down, no IPv4 address, bond member of bond0, ...
 */
export function interfaceVerdicts(
  _facts: HostFacts,
  _context: ResolveContext,
  _decision: Decision | null,
): Map<string, string> {
  throw new Error('interfaceVerdicts: not implemented yet');
}
