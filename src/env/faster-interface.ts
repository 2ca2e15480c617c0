/**
 * SPEC "Warnings": a faster usable interface than the chosen one. Raised only
 * when the master's network made the choice (subnet, route): that is the
 * classic trap where MASTER_ADDR names the management network and the job
 * runs on 1 Gb/s next to an idle 100 Gb/s port. After explicit the user chose;
 * after speed nothing usable is faster unless the ranking preferred RDMA on
 * purpose; after local no traffic leaves the host.
 */
import type { HostFacts, InterfaceFacts } from '../host/host-facts.js';
import type { Decision, ExcludeRule } from '../resolve/decision.js';
import { excludedBy } from '../resolve/excludes.js';
import { usableAddress } from '../resolve/usable.js';

export function fasterInterfaceWarning(
  facts: HostFacts,
  decision: Decision,
  excludes: readonly ExcludeRule[],
  masterAddresses: readonly string[],
): string | null {
  if (decision.strategy !== 'subnet' && decision.strategy !== 'route') return null;
  const chosen = facts.interfaces.find((iface) => iface.name === decision.interface);
  // Only measured speeds are compared: an unknown speed is no evidence either way.
  const chosenSpeed = chosen?.speedMbps ?? null;
  if (chosenSpeed === null) return null;

  const faster = facts.interfaces
    .filter(
      (iface): iface is InterfaceFacts & { speedMbps: number } =>
        iface.name !== decision.interface &&
        iface.speedMbps !== null &&
        iface.speedMbps > chosenSpeed &&
        excludedBy(iface, excludes) === null &&
        usableAddress(iface, decision.family) !== null,
    )
    .sort((a, b) => b.speedMbps - a.speedMbps || a.name.localeCompare(b.name));
  const fastest = faster[0];
  if (fastest === undefined) return null;
  const address = usableAddress(fastest, decision.family)?.address;
  const master = masterAddresses.length > 0 ? ` for the master ${masterAddresses.join(', ')}` : '';
  return `${fastest.name} (${fastest.speedMbps} Mb/s, ${address}) is faster than the chosen ${decision.interface} (${chosenSpeed} Mb/s), which ${decision.strategy} picked${master}; if the master has an address on ${fastest.name}'s network, make that the master address, or pass --iface ${fastest.name}`;
}
