/**
 * The collective's part of a verification's report (SPEC "Outputs",
 * check --json `collective`): the backend and ranks, the bus bandwidth per
 * size (bytes per second), each node's link, this node's ranks as NCCL
 * logged them (audit's records; empty for Gloo), the verdict, and what each
 * part cost on this node.
 */
import type { RankRecord } from '../audit/rank-record.js';
import type { BusBandwidthAt, CollectiveFinding, Figures } from './verdict.js';

export interface CollectiveReport {
  backend: 'nccl' | 'gloo' | null;
  torch: string | null;
  ranks: number | null;
  busBandwidth: BusBandwidthAt[];
  /** Per node: its link rate (bytes per second), egress and ingress, and whether a rule named it. */
  links: Figures['links'];
  /** The median of the nodes' links, bytes per second; null below two nodes. */
  medianLink: number | null;
  nccl: Omit<RankRecord, 'evidence'>[];
  verdict: { ok: boolean; findings: CollectiveFinding[] };
  /** Seconds each part took on this node: from start to the program's import, torch's import, the group's init, the collective and ring, reading, the barrier. */
  phases: {
    launchS: number | null;
    importS: number | null;
    initS: number | null;
    allReduceS: number | null;
    ringS: number | null;
    readS: number;
    barrierS: number;
    totalS: number;
  };
}
