/**
 * What the nodes published for SPEC `agree` (peers/publish.ts, the
 * registry's common networks: registry/common-networks.ts), as the strategy
 * (strategies/agree.ts) reads it from the resolution context.
 */

export interface CommonNetwork {
  network: string;
  prefixLength: number;
  /** The slowest node's interface on it, Mb/s; null when any node's speed is unknown. */
  slowestMbps: number | null;
  /** Every node's interface on it is RDMA-backed. */
  rdma: boolean;
  /** Addresses more than one node holds on it. */
  duplicated: string[];
}

/** What the registry answers once every node has published. */
export interface NetworkTable {
  nodes: number;
  /** The networks every node has an address on. */
  common: CommonNetwork[];
  /** Some of the networks only some nodes have, most widely held first. */
  partial: { network: string; prefixLength: number; nodes: number }[];
  partialMore: number;
}

export type Agreement =
  | { kind: 'published'; table: NetworkTable }
  /** No rendezvous ran, and why (single node, --verify below peers, no master). */
  | { kind: 'unavailable'; reason: string };
