/**
 * `--verify local`: the chosen interface is up and still holds the chosen
 * address, and the kernel's route to the master leaves through it. A route
 * through another interface is a warning, not a failure: the rendezvous may
 * still work, but NCCL's and Gloo's traffic to the master's node would take
 * another path than the one the variables name.
 */
import { routeWarnings } from '../env/route-warnings.js';
import type { HostFacts, InterfaceFacts, RouteAnswer } from '../host/host-facts.js';
import { sameAddress } from '../host/ip-address.js';
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
    warnings: routeWarnings(facts, decision, routesToMaster),
  };
}

function fail(message: string): LocalOutcome {
  return { ok: false, message, warnings: [] };
}
