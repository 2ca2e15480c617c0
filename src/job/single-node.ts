import type { HostFacts } from '../host/host-facts.js';
import { interfaceHolding, isLoopbackAddress, isUnspecifiedAddress } from '../host/ip-address.js';
import type { JobShape } from './job-shape.js';

/**
 * SPEC `local`: --standalone, or at most one node with no master other than
 * this host in any spelling: loopback, one of its own addresses (its
 * hostname and FQDN resolve to one), or the unspecified 0.0.0.0 or ::, which
 * torch runs as this host too (its store binds every address, its clients
 * connect to the local one: a Gloo all-reduce of 2 ranks, seen on torch
 * 1.13). An elastic range that may grow past one node (--nnodes 1:2) is not
 * single-node: a peer could join.
 */
export function isSingleNode(
  job: JobShape,
  masterAddresses: readonly string[],
  facts: HostFacts,
): boolean {
  if (job.standalone) return true;
  if (job.nnodes.max !== 1) return false;
  return masterAddresses.every(
    (master) =>
      isLoopbackAddress(master) ||
      isUnspecifiedAddress(master) ||
      interfaceHolding(facts.interfaces, master) !== undefined,
  );
}
