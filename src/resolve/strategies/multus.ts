/**
 * `multus`: in a Kubernetes pod with a second network (Multus attaches it as
 * `net1`, often SR-IOV or a macvlan on the fast fabric), that network is the
 * data network. The pod network (`eth0`) is where the Service names live,
 * so the master's name resolves there and `subnet` and `route` would pick
 * it: the job would run, at the pod network's speed. The pod learns which
 * interface Multus attached from the network-status annotation
 * (--network-status, cluster/multus-network-status.ts); the first usable
 * secondary network, in the order the pod's `k8s.v1.cni.cncf.io/networks`
 * lists them (Multus keeps it), is the pick. The excludes apply.
 */
import { type AttachedNetwork, NETWORK_STATUS_KEY } from '../../cluster/multus-network-status.js';
import type { HostFacts, InterfaceAddress } from '../../host/host-facts.js';
import { sameAddress } from '../../host/ip-address.js';
import { rejection, rejectionText } from '../candidates.js';
import type { ResolveContext, Strategy } from '../decision.js';
import { familyLabel } from '../ip-prefix.js';
import { usableAddresses } from '../usable.js';

export const multus: Strategy = (facts, context) => {
  const status = context.networkStatus;
  if (status === null) return { outcome: 'skipped', reason: 'no --network-status file' };
  const { file } = status;
  if (status.kind === 'none requested') {
    return {
      outcome: 'skipped',
      reason: `the pod asks for no Multus networks (${file} has no k8s.v1.cni.cncf.io/networks)`,
    };
  }
  if (status.kind === 'not written') {
    const asked = status.request === null ? '' : ` (the pod asks for ${status.request})`;
    return {
      outcome: 'skipped',
      reason: `${file} still had no ${NETWORK_STATUS_KEY} after ${Math.round(status.waitedMs / 1000)} s${asked}: is Multus running, and is the file the downward API's metadata.annotations?`,
    };
  }
  const secondary = status.networks.filter((network) => !network.default);
  if (secondary.length === 0) {
    const pod = status.networks.map(describe).join(', ') || 'none';
    return { outcome: 'skipped', reason: `Multus attached only the pod network (${pod})` };
  }
  const passed: string[] = [];
  for (const network of secondary) {
    const found = pick(network, facts, context);
    if ('address' in found) {
      const others = secondary.filter((n) => n !== network && n.interface !== null);
      const over =
        passed.length > 0
          ? `; before it: ${passed.join('; ')}`
          : others.length > 0
            ? `; first of ${secondary.map(describe).join(', ')} as the pod lists them`
            : '';
      const pod = status.networks.find((n) => n.default);
      const notPod =
        pod === undefined
          ? ''
          : `, not the pod network${pod.interface === null ? '' : ` ${pod.interface}`}`;
      return {
        outcome: 'picked',
        interface: found.name,
        address: found.address.address,
        reason: `Multus attached ${describe(network)} as a secondary network: the data network${notPod}${over}`,
      };
    }
    passed.push(`${describe(network)}: ${found.why}`);
  }
  return {
    outcome: 'skipped',
    reason: `no secondary network Multus attached is usable here (${passed.join('; ')})`,
  };
};

/** "net1 (default/rdma-net, 198.18.2.2)". */
function describe(network: AttachedNetwork): string {
  const what = [network.name || 'unnamed', ...network.ips].join(', ');
  return network.interface === null ? `(${what})` : `${network.interface} (${what})`;
}

/** The network's interface and address on this host, or why not. */
function pick(
  network: AttachedNetwork,
  facts: HostFacts,
  context: ResolveContext,
): { name: string; address: InterfaceAddress } | { why: string } {
  if (network.interface === null) return { why: 'the status names no interface' };
  const iface = facts.interfaces.find((candidate) => candidate.name === network.interface);
  if (iface === undefined) return { why: 'no such interface in this pod' };
  const rejected = rejection(iface, context);
  if (rejected !== null) return { why: rejectionText(rejected) };
  const held = usableAddresses(iface, context.family);
  // The address Multus reported, where the interface holds it; else its first.
  const address =
    held.find((entry) => network.ips.some((ip) => sameAddress(ip, entry.address))) ?? held[0];
  if (address === undefined) return { why: `no usable ${familyLabel(context.family)} address` };
  return { name: iface.name, address };
}
