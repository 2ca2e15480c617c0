/**
 * The chain combinator (STYLE.md §1, after smithy's chain()): runs links in
 * order until one picks, keeping a trace line per link it ran. It knows
 * nothing about networks: facts and context pass through untouched.
 */
import type { HostFacts } from '../host/host-facts.js';
import type {
  ResolveContext,
  Strategy,
  StrategyName,
  StrategyOutcome,
  TraceEntry,
} from './decision.js';

export type Link = readonly [StrategyName, Strategy];
type Picked = Extract<StrategyOutcome, { outcome: 'picked' }>;

export type ChainResult =
  | { picked: Picked; by: StrategyName; trace: TraceEntry[] }
  | { picked: null; fatal: TraceEntry | null; trace: TraceEntry[] };

export function chain(
  links: readonly Link[],
  facts: HostFacts,
  context: ResolveContext,
): ChainResult {
  const trace: TraceEntry[] = [];
  for (const [name, strategy] of links) {
    const result = strategy(facts, context);
    const entry: TraceEntry = { strategy: name, outcome: result.outcome, reason: result.reason };
    trace.push(entry);
    if (result.outcome === 'picked') return { picked: result, by: name, trace };
    if (result.outcome === 'fatal') return { picked: null, fatal: entry, trace };
  }
  return { picked: null, fatal: null, trace };
}
