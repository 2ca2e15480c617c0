/**
 * What NCCL really did on this node's ranks (its INFO lines in the
 * miniature's private files, read with audit's reader, src/audit), against
 * what nccl-run exported and predicted (SPEC "Verification", level
 * collective): the bootstrap interface and the socket devices must be the
 * one NCCL_SOCKET_IFNAME names (plan.nccl.pick, else the decision), and a
 * job that asked for RDMA (--require-transport) must not have `Using
 * network Socket`. A Gloo run writes no NCCL line: nothing to compare, and
 * `nccl` is empty in --json.
 */
import type { RankRecord } from '../audit/rank-record.js';
import type { RequiredTransport } from '../transport/transport-requirement.js';
import type { CollectiveFinding } from './verdict.js';

export interface NcclExpectation {
  /** The interface NCCL should bind: the prediction with the exported variables. */
  interface: string;
  /** This node's name, for the findings. */
  node: string;
  required: RequiredTransport | null;
}

export function ncclFindings(
  ranks: readonly RankRecord[],
  expected: NcclExpectation,
): CollectiveFinding[] {
  const findings: CollectiveFinding[] = [];
  for (const rank of ranks) {
    const who = `${expected.node} rank ${rank.rank ?? '?'} (pid ${rank.pid})`;
    const bound = [
      ...(rank.nccl.bootstrap === null ? [] : [rank.nccl.bootstrap]),
      ...(rank.nccl.devices.socket ?? []),
    ].filter((device) => device.interface !== expected.interface);
    if (bound.length > 0) {
      const seen = [...new Set(bound.map((device) => `${device.interface}:${device.address}`))];
      findings.push({
        level: 'failure',
        rule: 'interface',
        message: `${who}: NCCL bound ${seen.join(', ')}, not ${expected.interface}, the interface nccl-run exported`,
        nodes: [expected.node],
      });
    }
    if (expected.required !== null && rank.nccl.network === 'Socket') {
      findings.push({
        level: 'failure',
        rule: 'transport',
        message: `${who}: NCCL used network Socket, though --require-transport ${expected.required} asked for RDMA`,
        nodes: [expected.node],
      });
    }
  }
  return findings;
}

/** The last NCCL WARN line of each rank that logged one, for a collective that did not finish. */
export function lastWarnings(ranks: readonly RankRecord[]): string[] {
  return ranks.flatMap((rank) =>
    rank.warnings.length === 0 ? [] : [`pid ${rank.pid}: ${rank.warnings.at(-1)}`],
  );
}
