/**
 * The GPU check's (b) and (c) (issue 31), from what its runs left behind:
 * (b) NCCL's data path between the two "nodes" went over the interface
 *     nccl-run exported, by NCCL's own log, and its bus bandwidth;
 * (c) on the trap lab, NCCL alone took the first interface, which does not
 *     reach the peer (as nccl-run's model of NCCL predicted), and the job
 *     failed; through nccl-run, (b) holds there too.
 */
import { auditFindings } from '../../src/audit/findings.js';
import type { Bound } from '../../src/audit/nccl-events.js';
import type { RankRecord } from '../../src/audit/rank-record.js';
import { type Row, row } from './rows.js';

/** One torchrun agent of a two-node run, and what its worker and NCCL left behind. */
export interface NodeRun {
  node: number;
  /** The agent's exit status; null when it never started. */
  exitCode: number | null;
  /** Why gpu-check.sh stopped it (its timeout, its peer's failure); null when it ended by itself. */
  stopped: string | null;
  /** nccl-run's decision for this node (its explain); null for torchrun alone. */
  decision: Bound | null;
  /** What nccl-run's model says NCCL picks by itself here (explain's unmanaged.nccl). */
  unmanaged: Bound | null;
  /** The variables the worker saw (its GPU_CHECK_ENV line); null when it printed none. */
  env: Record<string, string | null> | null;
  /** What NCCL's log of the node's worker says, as audit reads it (src/audit). */
  worker: RankRecord;
  /** The worker's GPU_CHECK_RESULT line; null when it printed none. */
  result: WorkerResult | null;
}

export interface WorkerResult {
  rank: number;
  ranks: number;
  bytes: number;
  iters: number;
  /** Mean seconds per all_reduce over the timed iterations. */
  seconds: number;
  correct: boolean;
}

/** nccl-tests' all_reduce figures: algBw = bytes / time, busBw = algBw × 2(n−1)/n (bytes per second). */
export function busBandwidth(result: Pick<WorkerResult, 'bytes' | 'seconds' | 'ranks'>): {
  algBw: number;
  busBw: number;
} {
  const algBw = result.bytes / result.seconds;
  return { algBw, busBw: (algBw * 2 * (result.ranks - 1)) / result.ranks };
}

/** GB/s as nccl-tests prints it (10^9 bytes). */
export function gbPerSecond(bytesPerSecond: number): string {
  return `${(bytesPerSecond / 1e9).toFixed(2)} GB/s`;
}

/** (b), and the trap's run through nccl-run: the data went over the interface nccl-run exported. */
export function dataPathRows(label: string, nodes: NodeRun[]): Row[] {
  const each = (test: (node: NodeRun) => string | null) => {
    const problems = nodes.map(test).filter((problem) => problem !== null);
    return problems.length === 0 ? null : problems.join('; ');
  };
  const chosen = (node: NodeRun) => node.decision?.interface ?? '(no decision)';
  const exported = each((node) =>
    node.env?.NCCL_SOCKET_IFNAME === `=${chosen(node)}`
      ? null
      : `node ${node.node}'s worker saw NCCL_SOCKET_IFNAME=${node.env?.NCCL_SOCKET_IFNAME ?? 'nothing'}, nccl-run chose ${chosen(node)}`,
  );
  const bootstrap = each((node) => {
    const bound = node.worker.nccl.bootstrap;
    if (bound === null) return `node ${node.node}: NCCL logged no bootstrap interface`;
    return bound.interface === chosen(node)
      ? null
      : `node ${node.node}: bootstrap on ${bound.interface}, not ${chosen(node)}`;
  });
  const devices = each((node) => {
    const listed = node.worker.nccl.devices.socket;
    if (listed === null || listed.length === 0)
      return `node ${node.node}: no "NET/Socket : Using" line`;
    const other = listed.filter((device) => device.interface !== chosen(node));
    return other.length === 0
      ? null
      : `node ${node.node}: NET/Socket also on ${other.map(deviceText).join(' ')}`;
  });
  const channels = each((node) => {
    if (node.worker.nccl.channels.length === 0) return `node ${node.node}: no channel lines`;
    const off = node.worker.nccl.channels.filter((channel) => {
      const device = node.worker.nccl.devices.socket?.find((d) => d.index === channel.net?.device);
      return channel.net?.transport !== 'Socket' || device?.interface !== chosen(node);
    });
    return off.length === 0
      ? null
      : `node ${node.node}: ${off.length} channel(s) elsewhere (${off[0]?.via})`;
  });
  const hostIds = nodes.map((node) => node.worker.settings.NCCL_HOSTID ?? null);
  const twoHosts = hostIds.every((id) => id !== null) && new Set(hostIds).size === nodes.length;
  const ran = each((node) => (node.exitCode === 0 ? null : `node ${node.node} ${ending(node)}`));
  const result = nodes.find((node) => node.result?.rank === 0)?.result ?? null;
  return [
    row(
      `${label}: exported`,
      exported === null,
      exported ?? nodes.map((n) => `node ${n.node} NCCL_SOCKET_IFNAME==${chosen(n)}`).join(', '),
    ),
    row(
      `${label}: two nodes`,
      twoHosts,
      `NCCL_HOSTID as NCCL read it: ${hostIds.map((id) => id ?? 'not logged').join(', ')}`,
    ),
    row(
      `${label}: bootstrap`,
      bootstrap === null,
      bootstrap ??
        nodes.map((n) => `node ${n.node} ${boundText(n.worker.nccl.bootstrap)}`).join(', '),
    ),
    row(
      `${label}: NET/Socket`,
      devices === null,
      devices ??
        nodes
          .map((n) => `node ${n.node} ${(n.worker.nccl.devices.socket ?? []).map(deviceText)}`)
          .join(', '),
    ),
    row(
      `${label}: channels`,
      channels === null,
      channels ??
        nodes
          .map(
            (n) =>
              `node ${n.node}: ${n.worker.nccl.channels.length} via NET/Socket on ${chosen(n)}`,
          )
          .join(', '),
    ),
    auditRow(label, nodes),
    row(
      `${label}: all_reduce`,
      ran === null && result?.correct === true,
      allReduceText(result, ran),
    ),
  ];
}

/** `nccl-run audit` over both workers' logs: what it finds, none of it a failure. */
function auditRow(label: string, nodes: readonly NodeRun[]): Row {
  const findings = auditFindings({
    ranks: nodes.map((node) => node.worker),
    bareVersions: [],
    infoLines: 0,
  });
  const failures = findings.filter((finding) => finding.level === 'failure');
  return row(
    `${label}: audit`,
    failures.length === 0,
    findings.length === 0
      ? 'nccl-run audit: no findings'
      : findings
          .map((finding) => `${finding.level}: ${finding.message} (${finding.ranks.join(', ')})`)
          .join('; '),
  );
}

/** (c) The trap: torchrun alone fails, NCCL bound where nccl-run's model said it would. */
export function trapRows(alone: NodeRun[]): Row[] {
  const failed = alone.some((node) => node.exitCode !== 0);
  const predicted = alone.map((node) => {
    const bound = node.worker.nccl.bootstrap;
    const model = node.unmanaged;
    if (bound === null) return { ok: false, text: `node ${node.node}: NCCL logged no bootstrap` };
    return {
      ok: model !== null && bound.interface === model.interface && bound.address === model.address,
      text: `node ${node.node}: NCCL took ${boundText(bound)}, nccl-run's model said ${boundText(model)}`,
    };
  });
  const warning = alone.flatMap((node) => node.worker.warnings)[0];
  const endings = alone.map((node) => `node ${node.node} ${ending(node)}`).join(', ');
  return [
    row(
      'c) trap: NCCL alone',
      failed,
      failed
        ? `failed, as a job on the trap does: ${endings}${warning === undefined ? '' : `; NCCL WARN ${warning}`}`
        : 'the job ran: the first interface reached the peer, so the lab set no trap',
    ),
    row(
      "c) trap: NCCL's own pick",
      predicted.every((p) => p.ok),
      predicted.map((p) => p.text).join('; '),
    ),
  ];
}

function allReduceText(result: WorkerResult | null, ran: string | null): string {
  if (result === null) return ran ?? 'rank 0 printed no result';
  const { algBw, busBw } = busBandwidth(result);
  const sum = result.correct ? 'sum correct' : 'WRONG SUM';
  const size = `${(result.bytes / 2 ** 20).toFixed(0)} MiB`;
  const time = `${(result.seconds * 1000).toFixed(1)} ms`;
  const figures = `${size}, ${result.ranks} ranks, ${result.iters} timed: ${time} each, algBw ${gbPerSecond(algBw)}, busBw ${gbPerSecond(busBw)}`;
  return [ran, `${sum}; ${figures}`].filter((part) => part !== null).join('; ');
}

/** How an agent ended, for a message. */
export function ending(node: Pick<NodeRun, 'exitCode' | 'stopped'>): string {
  if (node.exitCode === null) return 'never ran';
  return node.stopped ?? `exited ${node.exitCode}`;
}

function deviceText(device: { index: number } & Bound): string {
  return `[${device.index}]${device.interface}:${device.address}`;
}

function boundText(bound: Bound | null): string {
  return bound === null ? 'nothing' : `${bound.interface} ${bound.address}`;
}
