/**
 * SPEC "Causes users meet": a container on a Docker or podman bridge network
 * in a multi-node job whose master is not on that network. Its interface
 * leads out only through the bridge's gateway, behind NAT, so no other node
 * can dial this node's NCCL and Gloo ports (the rendezvous, dialled outward,
 * still works, and the job hangs later). The fix is the container on the
 * nodes' own network: `--network host`.
 */
import type { HostFacts } from '../host/host-facts.js';
import { prefixContains, sameAddress } from '../host/ip-address.js';
import type { Decision, ResolveContext } from '../resolve/decision.js';
import { networkOf } from '../resolve/ip-prefix.js';

export function bridgeContainerWarning(
  facts: HostFacts,
  decision: Decision,
  context: ResolveContext,
): string | null {
  const engine = facts.container;
  if (engine == null || context.singleNode) return null;
  const iface = facts.interfaces.find((candidate) => candidate.name === decision.interface);
  // A bridge network's end in the container is a veth (macvlan and ipvlan sit on the nodes' own network).
  if (iface?.kind !== 'veth') return null;
  const held = iface.addresses.find((a) => sameAddress(a.address, decision.address));
  const masters = context.master?.addresses ?? [];
  if (held === undefined || masters.length === 0) return null;
  if (masters.some((master) => prefixContains(held.address, held.prefixLength, master)))
    return null;
  const gateway = facts.routes.find(
    (route) => route.interface === iface.name && route.prefixLength === 0 && route.gateway !== null,
  )?.gateway;
  if (gateway == null) return null;
  const network = `${networkOf(held.address, held.prefixLength)}/${held.prefixLength}`;
  const named =
    network === '172.17.0.0/16' && engine === 'docker' ? " (Docker's default bridge)" : '';
  return `this node is a ${engine} container on the bridge network ${network}${named}: ${iface.name} ${held.address} reaches the master ${masters.join(', ')} only through the bridge's gateway ${gateway}, behind NAT, so no other node can dial this node's NCCL and Gloo ports; run the container with --network host (or on a macvlan network of the nodes' own)`;
}
