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

/** Other nodes' MTUs on their chosen interfaces, as their registrations carry them. */
export interface PeerMtu {
  node: string;
  mtu: number;
}

/** Named in a mismatch; the rest are a count. */
const NAMED = 8;

export function checkMtu({ needs, node }: CheckInput): Verdict {
  if (needs.network === null || node.network === null) return passed('no interface was chosen');
  const { interface: iface, mtu } = node.network;
  if (mtu === null)
    return passed(`the MTU of ${iface} could not be read (/sys/class/net/${iface}/mtu)`);
  return compareMtus(iface, mtu, []);
}

/**
 * This node's MTU on `iface` against the other nodes' (--verify peers: the
 * mesh calls it with the roster's); before the nodes meet, `peers` is empty.
 */
export function compareMtus(iface: string, mtu: number, peers: readonly PeerMtu[]): Verdict {
  const here = `${iface} has MTU ${mtu}`;
  const others = peers.filter((peer) => peer.mtu !== mtu);
  if (others.length === 0) {
    return passed(
      peers.length === 0
        ? `${here} (compared across nodes by --verify peers)`
        : `${here}, as on the ${peers.length} other node${peers.length === 1 ? '' : 's'}`,
    );
  }
  const smallest = Math.min(mtu, ...others.map((peer) => peer.mtu));
  const named = others.slice(0, NAMED).map((peer) => `${peer.node} has ${peer.mtu}`);
  const more = others.length > NAMED ? ` and ${others.length - NAMED} more` : '';
  return mayFail(
    `${here}, but ${named.join(', ')}${more}: frames above ${smallest} may be dropped on the way (a switch at the smaller MTU), which stalls NCCL's large transfers while the rendezvous passes`,
    `give every node's interface on this network the same MTU as the switches carry (ip link set dev ${iface} mtu ${smallest}, or the network's own setting: the CNI's MTU, Docker's "mtu"), then check with ping -M do -s ${smallest - 28} PEER`,
  );
}
