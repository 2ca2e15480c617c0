/**
 * SPEC `subnet`: the interface on the master's own network, which the
 * rendezvous (and NCCL's bootstrap, which connects to it) must use anyway.
 * The master's every address counts (a name may resolve to several); an
 * address this host holds means this host is the master. Several matches:
 * the best by the speed ranking.
 */
import type { HostFacts } from '../../host/host-facts.js';
import { familyOf, isLoopbackAddress, prefixContains, sameAddress } from '../../host/ip-address.js';
import { type Candidate, candidates, predicate, reachContext, rejection } from '../candidates.js';
import type { ResolveContext, Strategy, StrategyOutcome } from '../decision.js';
import { familyLabel, networkOf } from '../ip-prefix.js';
import { compareBySpeed } from '../speed-ranking.js';

interface Match {
  candidate: Candidate;
  address: string;
  reason: string;
}

export const subnet: Strategy = (facts, given) => {
  const context = reachContext(given);
  if (context.master === null) return { outcome: 'skipped', reason: 'no master address known' };
  const { host, addresses } = context.master;
  const masters = addresses.filter((address) => familyOf(address) === context.family);
  if (masters.length === 0) {
    const resolved = addresses.length > 0 ? ` (it resolves to ${addresses.join(', ')})` : '';
    return {
      outcome: 'skipped',
      reason: `master ${host} has no ${familyLabel(context.family)} address${resolved}`,
    };
  }
  const own = ownAddress(facts, context, masters);
  if (own !== null) return own;

  const matches: Match[] = [];
  for (const candidate of candidates(facts, context)) {
    for (const held of candidate.addresses) {
      const master = masters.find((m) => prefixContains(held.address, held.prefixLength, m));
      if (master === undefined) continue;
      const network = `${networkOf(held.address, held.prefixLength)}/${held.prefixLength}`;
      matches.push({
        candidate,
        address: held.address,
        reason: `${network} on ${candidate.iface.name} contains master ${master}`,
      });
      break;
    }
  }
  const [best, ...others] = matches.sort((a, b) =>
    compareBySpeed(a.candidate.iface, b.candidate.iface),
  );
  if (best === undefined) return noMatch(facts, context, masters);
  const ranked =
    others.length > 0
      ? ` (best by speed of ${matches.map((m) => m.candidate.iface.name).join(', ')})`
      : '';
  return {
    outcome: 'picked',
    interface: best.candidate.iface.name,
    address: best.address,
    reason: `${best.reason}${ranked}`,
  };
};

/** The master is this host: the interface holding the address, if it may be used. */
function ownAddress(
  facts: HostFacts,
  context: ResolveContext,
  masters: string[],
): StrategyOutcome | null {
  for (const iface of facts.interfaces) {
    for (const held of iface.addresses) {
      const master = masters.find((m) => sameAddress(held.address, m));
      if (master === undefined) continue;
      const why = rejection(iface, context);
      if (why === null) {
        return {
          outcome: 'picked',
          interface: iface.name,
          address: held.address,
          reason: `master ${master} is this host's own address, on ${iface.name}`,
        };
      }
      if (isLoopbackAddress(master)) continue;
      return {
        outcome: 'fatal',
        reason: `master ${master} is this host's own address, on ${iface.name}, which ${predicate(why)}${FIX}`,
      };
    }
  }
  return null;
}

/**
 * SPEC: the interface that reaches the master but must be rejected (down,
 * excluded, no address of the family) is fatal, never a fall-through to
 * `speed`, which would pick another network and time out a minute later. A
 * loopback master is not that case: the chain goes on, and the loopback
 * warning and the master check decide.
 */
const FIX = '; name the interface to use with --iface, or change --exclude';

function noMatch(facts: HostFacts, context: ResolveContext, masters: string[]): StrategyOutcome {
  const loopback = masters.find(isLoopbackAddress);
  if (loopback !== undefined && masters.length === 1) {
    return {
      outcome: 'skipped',
      reason: `master ${loopback} is a loopback address, which other nodes cannot reach`,
    };
  }
  const rejected: string[] = [];
  for (const iface of facts.interfaces) {
    const why = rejection(iface, context);
    if (why === null) continue;
    for (const held of iface.addresses) {
      const master = masters.find((m) => prefixContains(held.address, held.prefixLength, m));
      if (master === undefined || isLoopbackAddress(master)) continue;
      rejected.push(
        `${networkOf(held.address, held.prefixLength)}/${held.prefixLength} on ${iface.name} contains master ${master}, but ${iface.name} ${predicate(why)}`,
      );
      break;
    }
  }
  if (rejected.length > 0) return { outcome: 'fatal', reason: `${rejected.join('; ')}${FIX}` };
  return {
    outcome: 'skipped',
    reason: `no usable interface's prefix contains master ${masters.join(', ')}`,
  };
}
