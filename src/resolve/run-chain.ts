import { NoInterfaceError } from '../errors.js';
import type { Family, HostFacts } from '../host/host-facts.js';
import { sameAddress } from '../host/ip-address.js';
import { ncclBindOn } from '../nccl/nccl-pick.js';
import { chain } from './chain.js';
import type { Decision, ResolveContext, StrategyName, TraceEntry } from './decision.js';
import { interfaceTable, interfaceVerdicts, traceTable } from './interface-table.js';
import { familyLabel } from './ip-prefix.js';
import { STRATEGIES } from './strategies/index.js';

/**
 * Runs the strategies in order; the first pick wins. ChainFailedError (exit
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
    // NCCL binds its own choice of address on the interface, whichever address the strategy went by.
    const bound = ncclBindOn(facts, name, context.family, context.ncclRules);
    const settled = bound ?? { address, family: context.family };
    return {
      interface: name,
      address: settled.address,
      family: settled.family,
      strategy: result.by,
      reason: `${reason}${bindNote(name, address, settled, context.family)}`,
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
  throw new ChainFailedError(message, details, result.trace);
}

/**
 * Whether the strategies before `strategy` in `names` decide without it
 * (one picks, or stops the chain): what that strategy needs read is then
 * not read. Runs those strategies themselves, not a copy of their rules;
 * they are pure, so the chain that runs later meets the same outcomes.
 */
export function decidedBefore(
  strategy: StrategyName,
  names: readonly StrategyName[],
  facts: HostFacts,
  context: ResolveContext,
): boolean {
  const at = names.indexOf(strategy);
  const before = names.slice(0, at < 0 ? names.length : at);
  const result = chain(
    before.map((name) => [name, STRATEGIES[name]] as const),
    facts,
    context,
  );
  return result.picked !== null || result.fatal !== null;
}

/** No strategy picked, or one was fatal (exit 69); the trace up to there, for explain to print. */
export class ChainFailedError extends NoInterfaceError {
  constructor(
    message: string,
    details: string[],
    readonly trace: TraceEntry[],
  ) {
    super(message, details);
  }
}

/** Why the decision's address is not the one the strategy named: NCCL's walk (nccl-pick.ts) decides. */
function bindNote(
  name: string,
  named: string,
  bound: { address: string; family: Family },
  family: Family,
): string {
  if (bound.family !== family) {
    return `; NCCL skips ${named}, so its sockets on ${name} use ${familyLabel(bound.family)} ${bound.address}`;
  }
  if (sameAddress(bound.address, named)) return '';
  return `; NCCL binds ${bound.address}, the first ${familyLabel(family)} address of ${name}, not ${named}`;
}
