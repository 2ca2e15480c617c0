/**
 * SPEC `agree` (opt-in): the network decided together. Before the chain
 * runs, every node publishes its usable interfaces through the master's
 * probe service (peers/publish.ts) and gets back the networks
 * every node has (registry/common-networks.ts); that table reaches this
 * strategy in the context, so the strategy stays a pure function of the
 * host's facts and what the nodes published. Every node ranks the same
 * table the same way, so every node picks the same network, and takes its
 * own interface on it; the mesh of `--verify peers` then proves it.
 *
 * Ranking: RDMA-backed on every node first, then the slowest node's speed
 * on it (a ring all-reduce runs at its slowest link; unknown speed last),
 * then the network address, so that a tie still has one answer. A network
 * on which two nodes hold the same address (docker0's 172.17.0.1 on every
 * host) connects none of them and never counts.
 */
import { prefixContains } from '../../host/ip-address.js';
import type { CommonNetwork, NetworkTable } from '../agreement.js';
import { candidates } from '../candidates.js';
import type { Strategy } from '../decision.js';
import { compareBySpeed } from '../speed-ranking.js';

export const agree: Strategy = (facts, context) => {
  const agreement = context.agreement;
  if (agreement === null) return { outcome: 'skipped', reason: 'no rendezvous ran' };
  if (agreement.kind === 'unavailable') return { outcome: 'skipped', reason: agreement.reason };
  const { table } = agreement;
  const counted = table.common.filter((network) => network.duplicated.length === 0);
  const notCounted = describeExcluded(table);
  const [winner, runnerUp] = [...counted].sort(compareNetworks);
  if (winner === undefined) {
    return {
      outcome: 'skipped',
      reason: `no network is common to all ${table.nodes} nodes${notCounted}`,
    };
  }
  const mine = candidates(facts, context)
    .flatMap((candidate) =>
      candidate.addresses
        .filter((held) => prefixContains(winner.network, winner.prefixLength, held.address))
        .map((held) => ({ iface: candidate.iface, address: held.address })),
    )
    .sort((a, b) => compareBySpeed(a.iface, b.iface));
  const [own] = mine;
  if (own === undefined) {
    // It published one there, so the host changed between publish and now.
    return {
      outcome: 'skipped',
      reason: `the nodes agreed on ${cidr(winner)}, but this node no longer has a usable address on it`,
    };
  }
  const common = counted
    .map((network) => `${cidr(network)} (${describeNetwork(network)})`)
    .join(', ');
  return {
    outcome: 'picked',
    interface: own.iface.name,
    address: own.address,
    reason: `${cidr(winner)} is common to all ${table.nodes} nodes and wins ${why(winner, runnerUp)}; ${own.iface.name} holds ${own.address} on it; common: ${common}${notCounted}`,
  };
};

function compareNetworks(a: CommonNetwork, b: CommonNetwork): number {
  const rdma = Number(b.rdma) - Number(a.rdma);
  if (rdma !== 0) return rdma;
  const speed = (b.slowestMbps ?? -1) - (a.slowestMbps ?? -1);
  if (speed !== 0) return speed;
  return cidr(a) < cidr(b) ? -1 : cidr(a) > cidr(b) ? 1 : 0;
}

function why(winner: CommonNetwork, runnerUp: CommonNetwork | undefined): string {
  if (runnerUp === undefined) return '(the only one)';
  if (winner.rdma && !runnerUp.rdma) return `(RDMA-backed on every node, ${cidr(runnerUp)} is not)`;
  if (winner.slowestMbps !== runnerUp.slowestMbps) {
    return `(its slowest node ${speed(winner)}, ${cidr(runnerUp)}'s ${speed(runnerUp)})`;
  }
  return `(tied with ${cidr(runnerUp)} on ${speed(winner)}; the lower network address breaks the tie)`;
}

function describeExcluded(table: NetworkTable): string {
  const parts: string[] = [];
  for (const network of table.common) {
    if (network.duplicated.length === 0) continue;
    parts.push(
      `${cidr(network)} does not count: ${network.duplicated.join(', ')} is held by more than one node`,
    );
  }
  if (table.partial.length > 0) {
    const some = table.partial.map((network) => `${cidr(network)} on ${network.nodes}`).join(', ');
    const more = table.partialMore > 0 ? ` and ${table.partialMore} more` : '';
    parts.push(`only on some of the ${table.nodes} nodes: ${some}${more}`);
  }
  return parts.length > 0 ? `; ${parts.join('; ')}` : '';
}

function describeNetwork(network: CommonNetwork): string {
  return network.rdma ? `RDMA, slowest ${speed(network)}` : `slowest ${speed(network)}`;
}

function speed(network: CommonNetwork): string {
  return network.slowestMbps === null ? 'speed unknown' : `${network.slowestMbps} Mb/s`;
}

function cidr(network: { network: string; prefixLength: number }): string {
  return `${network.network}/${network.prefixLength}`;
}
