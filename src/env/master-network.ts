/**
 * SPEC "Warnings": the master's name resolving to a different network than
 * the one the rendezvous endpoint uses. With a c10d (or etcd) rendezvous,
 * torchrun meets at --rdzv-endpoint and never reads --master-addr, and
 * nccl-run chose the interface for the endpoint; a --master-addr (or
 * MASTER_ADDR) on another network means the user expects the job on a
 * network it will not use.
 */
import type { HostFacts, RouteAnswer } from '../host/host-facts.js';
import { familyOf, interfaceHolding } from '../host/ip-address.js';
import { replayRoutes } from '../host/routes.js';
import type { JobShape } from '../job/job-shape.js';
import type { Decision } from '../resolve/decision.js';

/** The --master-addr to compare with the endpoint, when there is one (plan/plan.ts resolves it). */
export function otherMasterAddr(job: JobShape): string | null {
  const { master, masterAddr } = job;
  return master === null || masterAddr === null || masterAddr === master.host ? null : masterAddr;
}

/** masterAddrAddresses: what otherMasterAddr resolves to; none when it does not (torchrun never reads it here). */
export function masterNetworkWarning(
  job: JobShape,
  facts: HostFacts,
  decision: Decision,
  routesToMaster: readonly RouteAnswer[],
  masterAddrAddresses: readonly string[],
): string | null {
  const endpoint = job.master;
  const masterAddr = otherMasterAddr(job);
  if (endpoint === null || masterAddr === null) return null;

  const wanted = masterAddrAddresses.filter((address) => familyOf(address) === decision.family);
  if (wanted.length === 0) return null;
  // Replay over the facts' routing table: the same answer for a live host and a --facts snapshot.
  const masterAddrRoutes = replayRoutes(wanted, facts);

  const endpointNetworks = networksOf(routesToMaster, facts, decision);
  const masterAddrNetworks = networksOf(masterAddrRoutes, facts, decision);
  if (endpointNetworks.size === 0 || masterAddrNetworks.size === 0) return null;
  if ([...masterAddrNetworks].some((name) => endpointNetworks.has(name))) return null;

  const via = (names: Set<string>) => [...names].join(', ');
  const resolvedTo =
    wanted.length === 1 && wanted[0] === masterAddr ? '' : ` (${wanted.join(', ')})`;
  return `master address ${masterAddr}${resolvedTo} is reached via ${via(masterAddrNetworks)}, but the ${job.rdzvBackend} rendezvous endpoint ${endpoint.host} via ${via(endpointNetworks)}: different networks; torchrun meets at the endpoint, so the job uses ${decision.interface}`;
}

/**
 * The interfaces the routes leave through. The kernel names lo for every
 * local route; the network of this host's own address is the interface that
 * holds it (as the route strategy reads it).
 */
function networksOf(
  routes: readonly RouteAnswer[],
  facts: HostFacts,
  decision: Decision,
): Set<string> {
  const names = new Set<string>();
  for (const route of routes) {
    if (familyOf(route.destination) !== decision.family) continue;
    if (route.type === 'local') {
      const owner = interfaceHolding(facts.interfaces, route.destination);
      if (owner !== undefined) names.add(owner.name);
    } else {
      names.add(route.interface);
    }
  }
  return names;
}
