/**
 * The interface that reaches the master, as SPEC's `explicit` row asks for a
 * kept NCCL_SOCKET_IFNAME: what `subnet`, then `route`, would pick, among
 * the interfaces `among` admits (default excludes and usability apply as in
 * those strategies). null when neither picks.
 */
import type { HostFacts, InterfaceFacts } from '../host/host-facts.js';
import type { ResolveContext, StrategyOutcome } from './decision.js';
import { route } from './strategies/route.js';
import { subnet } from './strategies/subnet.js';

export type Reach = Extract<StrategyOutcome, { outcome: 'picked' }>;

export function reachMaster(
  facts: HostFacts,
  context: ResolveContext,
  among: (iface: InterfaceFacts) => boolean = () => true,
): Reach | null {
  const scoped = { ...facts, interfaces: facts.interfaces.filter(among) };
  for (const strategy of [subnet, route]) {
    const outcome = strategy(scoped, context);
    if (outcome.outcome === 'picked') return outcome;
  }
  return null;
}
