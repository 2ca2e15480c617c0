/**
 * SPEC `speed`: with nothing tying the job to a network, the fastest usable
 * interface (RDMA-backed first: its IPoIB or RoCE netdev is on the fabric
 * NCCL's data path uses).
 */

import type { InterfaceFacts } from '../../host/host-facts.js';
import { candidates, rejection, rejectionText } from '../candidates.js';
import type { ResolveContext, Strategy } from '../decision.js';
import { familyLabel } from '../ip-prefix.js';
import { describeSpeed, rankBySpeed } from '../speed-ranking.js';

export const speed: Strategy = (facts, context) => {
  const usable = candidates(facts, context);
  const ranked = rankBySpeed(usable.map((c) => c.iface));
  const best = ranked[0];
  const address = usable.find((c) => c.iface === best)?.addresses[0];
  if (best === undefined || address === undefined) {
    return {
      outcome: 'skipped',
      reason: `no usable ${familyLabel(context.family)} interface (${tally(facts.interfaces.map((i) => rejectionOf(i, context)))})`,
    };
  }
  const over =
    ranked.length > 1
      ? `; best of ${ranked.length} usable (next: ${ranked[1]?.name}, ${describeSpeed(ranked[1] ?? best)})`
      : '; the only usable one';
  return {
    outcome: 'picked',
    interface: best.name,
    address: address.address,
    reason: `fastest usable: ${best.name} (${describeSpeed(best)})${over}`,
  };
};

function rejectionOf(iface: InterfaceFacts, context: ResolveContext): string {
  const why = rejection(iface, context);
  return why === null ? '' : rejectionText(why);
}

/** "3 excluded (prefix veth), 1 down" — counts of each rejection, most common first. */
function tally(reasons: string[]): string {
  const counts = new Map<string, number>();
  for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const parts = [...counts].sort((a, b) => b[1] - a[1]).map(([reason, n]) => `${n} ${reason}`);
  return parts.length > 0 ? parts.join(', ') : 'this host has no interfaces';
}
