import { NoInterfaceError } from '../errors.js';
import type { HostFacts } from '../host/host-facts.js';
import { chain } from './chain.js';
import type { Decision, ResolveContext, StrategyName } from './decision.js';
import { interfaceTable, traceTable } from './interface-table.js';
import { STRATEGIES } from './strategies/index.js';
import { interfaceVerdicts } from './verdict.js';

/**
 * Runs the strategies in order; the first pick wins. NoInterfaceError (exit
 * 69) when one is fatal or none picks: a one-line message, and the interface
 * table and trace in its details.
 */
export function runChain(
  names: readonly StrategyName[],
  facts: HostFacts,
  context: ResolveContext,
): Decision {
  const result = chain(
    names.map((name) => [name, STRATEGIES[name]] as const),
    facts,
    context,
  );
  if (result.picked !== null) {
    const { interface: name, address, reason } = result.picked;
    return {
      interface: name,
      address,
      family: context.family,
      strategy: result.by,
      reason,
      trace: result.trace,
    };
  }
  const message =
    result.fatal !== null
      ? result.fatal.reason
      : names.length === 0
        ? 'no interface chosen: the strategy list is empty'
        : `no usable interface: none of the strategies ${names.join(', ')} picked one (interfaces and trace below)`;
  const details = [
    'interfaces:',
    ...interfaceTable(facts, interfaceVerdicts(facts, context, null)),
    'trace:',
    ...traceTable(result.trace),
  ];
  throw new NoInterfaceError(message, details);
}
