/**
 * `--verify local`: the chosen interface is up and still holds the chosen
 * address, and the kernel's route to the master leaves through it. A route
 * through another interface is a warning, not a failure: the rendezvous may
 * still work, but NCCL's and Gloo's traffic to the master's node would take
 * another path than the one the variables name.
 */
import type { HostFacts, InterfaceFacts, RouteAnswer, RouteEntry } from '../host/host-facts.js';
import { interfaceHolding, prefixContains, sameAddress } from '../host/ip-address.js';
// One rule for "up" everywhere: the one the strategies choose by (NCCL's IFF_RUNNING).
import { isUp } from '../host/link-state.js';
import type { Decision } from '../resolve/decision.js';

export type LocalOutcome =
  | { ok: true; iface: InterfaceFacts; warnings: string[] }
  | { ok: false; message: string; warnings: string[] };

export function checkLocal(
  facts: HostFacts,
  decision: Decision,
  routesToMaster: readonly RouteAnswer[],
): LocalOutcome {
  const iface = facts.interfaces.find((candidate) => candidate.name === decision.interface);
  if (iface === undefined) {
    return fail(`the chosen interface ${decision.interface} does not exist on this host`);
  }
  if (!isUp(iface)) {
    const state = `operstate ${iface.operstate ?? 'unreadable'}, carrier ${iface.carrier ?? 'unreadable'}`;
    return fail(`the chosen interface ${iface.name} is not up (${state})`);
  }
  const held = iface.addresses.find((entry) => sameAddress(entry.address, decision.address));
  if (held === undefined || held.family !== decision.family) {
    const holds = iface.addresses.map((entry) => entry.address).join(', ') || 'no address';
    return fail(
      `the chosen interface ${iface.name} does not hold the chosen ${decision.family} address ${decision.address} (it holds ${holds})`,
    );
  }
  return {
    ok: true,
    iface,
    warnings: routesToMaster.flatMap((route) => routeWarning(route, facts, iface)),
  };
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

/**
 * The route warnings alone, for the plan (SPEC "Causes users meet": two
 * interfaces in one subnet where the kernel sends from the other one is
 * explain's warning too, as every warning is). Empty where the chosen
 * interface is not among the facts (checkLocal fails on it).
 */
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

/** Every route whose prefix holds the address: the one the kernel picked and those it passed over. */
export function routesCovering(address: string, routes: readonly RouteEntry[]): RouteEntry[] {
  return routes.filter((route) => prefixContains(route.destination, route.prefixLength, address));
}

function routeText(route: RouteEntry): string {
  const via = route.gateway ? ` via ${route.gateway}` : '';
  return `${route.destination}/${route.prefixLength}${via} dev ${route.interface} metric ${route.metric}`;
}

function fail(message: string): LocalOutcome {
  return { ok: false, message, warnings: [] };
}
