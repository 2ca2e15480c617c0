/**
 * The route warning (SPEC "Verification", local; "Causes users meet"): the
 * kernel's route to the master leaves through another interface than the
 * chosen one, or this node is the master and its address sits on another
 * interface. The rendezvous may still work, but NCCL's and Gloo's traffic
 * would take another path than the variables name (two interfaces in one
 * subnet, the kernel sending from the other one: NVIDIA/nccl#1581).
 * `--verify local` says it, and explain, as every warning is the plan's.
 */
import type { HostFacts, InterfaceFacts, RouteAnswer, RouteEntry } from '../host/host-facts.js';
import { interfaceHolding, prefixContains } from '../host/ip-address.js';
import type { Decision } from '../resolve/decision.js';

/** Empty where the chosen interface is not among the facts (checkLocal fails on it). */
export function routeWarnings(
  facts: HostFacts,
  decision: Decision,
  routesToMaster: readonly RouteAnswer[],
): string[] {
  const iface = facts.interfaces.find((candidate) => candidate.name === decision.interface);
  return iface === undefined
    ? []
    : routesToMaster.flatMap((route) => routeWarning(route, facts, iface));
}

function routeWarning(route: RouteAnswer, facts: HostFacts, chosen: InterfaceFacts): string[] {
  if (route.type === 'local') {
    // The master is this host; its address's owner is the interface peers reach it on (SPEC `route`).
    const owner = interfaceHolding(facts.interfaces, route.destination);
    if (owner === undefined || owner.name === chosen.name) return [];
    return [
      `the master address ${route.destination} belongs to ${owner.name}, not to the chosen ${chosen.name}: workers reach this node on ${owner.name} while NCCL and Gloo use ${chosen.name}`,
    ];
  }
  if (route.interface === chosen.name) return [];
  const overlapping = routesCovering(route.destination, facts.routes);
  const listed =
    overlapping.length > 0
      ? overlapping.map(routeText).join('; ')
      : 'none in the routing table read';
  return [
    `the route to the master ${route.destination} leaves through ${route.interface}, not the chosen ${chosen.name}; routes covering it: ${listed}`,
  ];
}

/** Every route whose prefix holds the address: the one the kernel picked and those it passed over. */
export function routesCovering(address: string, routes: readonly RouteEntry[]): RouteEntry[] {
  return routes.filter((route) => prefixContains(route.destination, route.prefixLength, address));
}

function routeText(route: RouteEntry): string {
  const via = route.gateway ? ` via ${route.gateway}` : '';
  return `${route.destination}/${route.prefixLength}${via} dev ${route.interface} metric ${route.metric}`;
}
