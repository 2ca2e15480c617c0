/**
 * The chosen interface's MTU. On its own a node's MTU fails nothing: TCP
 * settles each connection's segment size from both ends' MTUs. What stalls a
 * job is a path whose MTU is smaller than its ends' (a switch or a router at
 * 1500 between nodes at 9000: the rendezvous and small messages pass, the
 * first large transfer hangs when ICMP does not come back), and nodes that
 * disagree are the mark of one: the nodes' MTUs come with their
 * registrations (--verify peers), and a mismatch is a warning naming them.
 * The path itself only a large transfer proves (the throughput sample).
 */
import type { CheckInput } from './check-input.js';
import { mayFail, passed, type Verdict } from './finding.js';

export function checkMtu({ needs, node }: CheckInput): Verdict {
  if (needs.network === null || node.network === null) return passed('no interface was chosen');
  const { interface: iface, mtu } = node.network;
  if (mtu === null)
    return passed(`the MTU of ${iface} could not be read (/sys/class/net/${iface}/mtu)`);
  const here = `${iface} has MTU ${mtu}`;
  const others = needs.network.peerMtus.filter((peer) => peer.mtu !== mtu);
  if (others.length === 0) {
    const compared = needs.network.peerMtus.length;
    return passed(
      compared === 0
        ? `${here} (compared across nodes by --verify peers)`
        : `${here}, as on the ${compared} other node${compared === 1 ? '' : 's'}`,
    );
  }
  const smallest = Math.min(mtu, ...others.map((peer) => peer.mtu));
  return mayFail(
    `${here}, but ${others.map((peer) => `${peer.node} has ${peer.mtu}`).join(', ')}: frames above ${smallest} may be dropped on the way (a switch at the smaller MTU), which stalls NCCL's large transfers while the rendezvous passes`,
    `give every node's interface on this network the same MTU as the switches carry (ip link set dev ${iface} mtu ${smallest}, or the network's own setting: the CNI's MTU, Docker's "mtu"), then check with ping -M do -s ${smallest - 28} PEER`,
  );
}
