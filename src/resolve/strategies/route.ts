/**
 * SPEC `route`: the interface the kernel itself would send to the master
 * through, which is where the rendezvous connection leaves anyway. Only the
 * first answer of the wanted family counts; a later master address reached
 * another way is not a reason to prefer it. A `local` route means the master
 * is this host, and the interface is the one holding the address (the kernel
 * names lo for every local route).
 */

import {
  familyOf,
  interfaceHolding,
  isLoopbackAddress,
  sameAddress,
} from '../../host/ip-address.js';
import { predicate, reachContext, rejection } from '../candidates.js';
import type { Strategy } from '../decision.js';
import { familyLabel } from '../ip-prefix.js';
import { fixFor, heldByLoopback } from '../loopback-address.js';
import { usableAddresses } from '../usable.js';

export const route: Strategy = (facts, context) => {
  if (context.master === null) return { outcome: 'skipped', reason: 'no master address known' };
  const answer = context.routesToMaster.find((r) => familyOf(r.destination) === context.family);
  if (answer === undefined) {
    const masters = context.master.addresses.filter((a) => familyOf(a) === context.family);
    const to = masters.length > 0 ? masters.join(', ') : context.master.host;
    return {
      outcome: 'skipped',
      reason: `the kernel has no ${familyLabel(context.family)} route to master ${to}`,
    };
  }
  const { destination } = answer;

  const named = facts.interfaces.find((i) => i.name === answer.interface);
  const iface =
    answer.type === 'local' ? (interfaceHolding(facts.interfaces, destination) ?? named) : named;
  const how =
    answer.type === 'local'
      ? `${destination} is this host's own address`
      : `route to ${destination} leaves`;
  if (iface === undefined) {
    const reason =
      answer.type === 'local'
        ? `${how}, but neither an interface holding it nor ${answer.interface} is in the facts`
        : `${how} via ${answer.interface}, which is not among this host's interfaces`;
    return { outcome: 'skipped', reason };
  }
  const at = answer.type === 'local' ? `${how}, on ${iface.name}` : `${how} via ${iface.name}`;
  const why = rejection(iface, reachContext(context));
  // The kernel sends from an address only lo holds (BGP unnumbered): name lo, it and the fix.
  const onLo = answer.type === 'local' ? null : heldByLoopback(facts, answer.source);
  if (onLo !== null && why !== null) {
    return {
      outcome: 'fatal',
      reason: `${at} from ${onLo}, an address only lo holds (a BGP-unnumbered /32): NCCL would bind lo's first address, 127.0.0.1, which other nodes cannot reach; ${fixFor(onLo)}`,
    };
  }
  // SPEC: the interface that reaches the master but must be rejected is fatal,
  // never a fall-through to `speed` (a loopback master is not that case).
  if (why !== null && !isLoopbackAddress(destination)) {
    return {
      outcome: 'fatal',
      reason: `${at}, which ${predicate(why)}; name the interface to use with --iface, or change --exclude`,
    };
  }
  if (why !== null) return { outcome: 'skipped', reason: `${at}, which ${predicate(why)}` };

  // The kernel's preferred source is the address peers will see; keep it when the interface holds it.
  const held = usableAddresses(iface, context.family);
  const address =
    held.find((a) => answer.source !== null && sameAddress(a.address, answer.source)) ??
    held.find((a) => answer.type === 'local' && sameAddress(a.address, destination)) ??
    held[0];
  if (address === undefined) {
    return {
      outcome: 'fatal',
      reason: `${at}, which has no usable ${familyLabel(context.family)} address; name the interface to use with --iface`,
    };
  }
  const gateway = answer.gateway === null ? '' : ` (gateway ${answer.gateway})`;
  return {
    outcome: 'picked',
    interface: iface.name,
    address: address.address,
    reason: `${at}${gateway}`,
  };
};
