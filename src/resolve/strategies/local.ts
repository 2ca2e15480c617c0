/**
 * SPEC `local`: a job on this node alone talks over loopback, whatever else the
 * host has; excludes do not apply (lo is on the default list for the others).
 */
import { isLoopbackAddress } from '../../host/ip-address.js';
import { isUp } from '../../host/link-state.js';
import type { Strategy } from '../decision.js';
import { familyLabel } from '../ip-prefix.js';

export const local: Strategy = (facts, context) => {
  if (!context.singleNode) {
    return {
      outcome: 'skipped',
      reason:
        'the job is not single-node (not --standalone, and more than one node or a master on another host)',
    };
  }
  const lo = facts.interfaces.find((iface) => iface.kind === 'loopback');
  if (lo === undefined)
    return {
      outcome: 'skipped',
      reason: 'single-node job, but this host has no loopback interface',
    };
  if (!isUp(lo)) return { outcome: 'skipped', reason: `single-node job, but ${lo.name} is down` };
  const address = lo.addresses.find(
    (a) => a.family === context.family && isLoopbackAddress(a.address),
  );
  if (address === undefined) {
    return {
      outcome: 'skipped',
      reason: `single-node job, but ${lo.name} has no ${familyLabel(context.family)} loopback address`,
    };
  }
  return {
    outcome: 'picked',
    interface: lo.name,
    address: address.address,
    reason: `single-node job: every rank is on this host, so ${lo.name} (${address.address}) carries it`,
  };
};
