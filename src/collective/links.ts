/**
 * Each node's link rate from the ring pass (templates/collective.py): its
 * first rank sent to the next node's and to the previous one's, one pair at
 * a time. A node's egress is the best of its sends, its ingress the best of
 * what it received, and its link the lower of the two: a node whose own
 * link is slow is slow both ways it sends (or both ways it receives), while
 * its neighbours each have one fast leg. With two nodes there is one pair,
 * and both report it.
 */
import type { CollectiveResult } from './result.js';

export interface NodeLink {
  /** torchrun's node index (GROUP_RANK). */
  node: number;
  name: string;
  host: string;
  address: string;
  /** Bytes per second; null where the node took no part in the pass (one node). */
  egress: number | null;
  ingress: number | null;
  link: number | null;
}

export function nodeLinks(result: CollectiveResult): NodeLink[] {
  const firsts = result.members
    .filter((member) => member.localRank === 0)
    .sort((a, b) => a.node - b.node);
  const best = (rates: number[]) => (rates.length === 0 ? null : Math.max(...rates));
  return firsts.map((member) => {
    const rate = (send: CollectiveResult['sends'][number]) =>
      send.seconds > 0 ? send.bytes / send.seconds : Number.POSITIVE_INFINITY;
    const egress = best(result.sends.filter((send) => send.from === member.node).map(rate));
    const ingress = best(result.sends.filter((send) => send.to === member.node).map(rate));
    const link = egress === null || ingress === null ? null : Math.min(egress, ingress);
    return {
      node: member.node,
      name: member.name,
      host: member.host,
      address: member.address,
      egress,
      ingress,
      link,
    };
  });
}
