/**
 * The registry's side of `agree` (SPEC strategy table): from every node's
 * published networks, the ones every node has, with what the strategy
 * ranks them by: whether every node's interface on it is RDMA-backed, the
 * slowest node's speed, and the addresses more than one node holds (a
 * docker0 at 172.17.0.1 on every host is "common" to all and connects none
 * of them). The ranking itself is the strategy's (resolve/strategies/agree.ts):
 * every node ranks the same table, so every node reaches the same answer.
 */
import {
  type CommonNetwork,
  MAX_MISSING_LISTED,
  type PublishedNetwork,
  type Table,
} from '../probe/protocol.js';
import { networkOf } from '../resolve/ip-prefix.js';

/** One node's best interface on each network it has (RDMA-backed first, then the faster). */
function byNetwork(networks: readonly PublishedNetwork[]): Map<string, PublishedNetwork> {
  const best = new Map<string, PublishedNetwork>();
  for (const entry of networks) {
    const key = `${networkOf(entry.address, entry.prefixLength)}/${entry.prefixLength}`;
    const held = best.get(key);
    if (held === undefined || rank(entry) > rank(held)) best.set(key, entry);
  }
  return best;
}

function rank(entry: PublishedNetwork): number {
  return (entry.rdma !== null ? 2 ** 40 : 0) + (entry.speedMbps ?? -1);
}

export function commonNetworks(
  published: readonly (readonly PublishedNetwork[])[],
): Omit<Table, 'v' | 'kind' | 'token'> {
  const nodes = published.length;
  const perNetwork = new Map<string, PublishedNetwork[]>();
  for (const networks of published) {
    for (const [key, entry] of byNetwork(networks)) {
      const list = perNetwork.get(key) ?? [];
      list.push(entry);
      perNetwork.set(key, list);
    }
  }
  const common: CommonNetwork[] = [];
  const partial: Table['partial'] = [];
  for (const [key, entries] of [...perNetwork].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const [network = '', prefix = '0'] = key.split('/');
    if (entries.length < nodes) {
      partial.push({ network, prefixLength: Number(prefix), nodes: entries.length });
      continue;
    }
    const holders = new Map<string, number>();
    for (const entry of entries) holders.set(entry.address, (holders.get(entry.address) ?? 0) + 1);
    const speeds = entries.map((entry) => entry.speedMbps);
    common.push({
      network,
      prefixLength: Number(prefix),
      slowestMbps: speeds.includes(null) ? null : Math.min(...(speeds as number[])),
      rdma: entries.every((entry) => entry.rdma !== null),
      duplicated: [...holders]
        .filter(([, count]) => count > 1)
        .map(([address]) => address)
        .slice(0, 4),
    });
  }
  partial.sort((a, b) => b.nodes - a.nodes);
  return {
    nodes,
    common,
    partial: partial.slice(0, MAX_MISSING_LISTED),
    partialMore: Math.max(0, partial.length - MAX_MISSING_LISTED),
  };
}
