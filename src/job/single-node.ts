import type { HostFacts } from '../host/host-facts.js';
import { interfaceHolding, isLoopbackAddress } from '../host/ip-address.js';
import type { JobShape } from './job-shape.js';

/**
 * SPEC `local`: --standalone, or at most one node with no master other than
 * loopback or this host's own addresses. An elastic range that may grow past
 * one node (--nnodes 1:2) is not single-node: a peer could join.
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
      isLoopbackAddress(master) || interfaceHolding(facts.interfaces, master) !== undefined,
  );
}
