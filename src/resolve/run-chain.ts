import type { HostFacts } from '../host/host-facts.js';
import type { Decision, ResolveContext, StrategyName } from './decision.js';

/** Runs the strategies in order; the first pick wins. NoInterfaceError (with the trace) when none picks or one is fatal. */
export function runChain(_names: readonly StrategyName[], _facts: HostFacts, _context: ResolveContext): Decision {
  throw new Error('runChain: not implemented yet');
}
