/**
 * SPEC "Outputs", audit: what is wrong in what NCCL said, each finding
 * naming its ranks and the line that shows it. A failure is what leaves the
 * job on a slower or broken path (exit 75); a warning is worth a look.
 */
import { isLinkLocalAddress, isLoopbackAddress } from '../host/ip-address.js';
import type { Bound } from './nccl-events.js';
import { type Evidence, type NcclLog, type RankRecord, rankName } from './rank-record.js';

export interface Finding {
  level: 'failure' | 'warning';
  message: string;
  /** The ranks it concerns, as rankName says them. */
  ranks: string[];
  /** The line that shows it (the first rank's). */
  evidence: Evidence | null;
}

/**
 * Interfaces that are a container's or VM's bridge or its veth ends, by the
 * name prefixes their tools give them (docker, podman, libvirt, CNI plugins;
 * the same families as SPEC's default excludes): an address there reaches
 * nothing on another host.
 */
const BRIDGE_PREFIXES = [
  'docker',
  'veth',
  'virbr',
  'br-',
  'cni',
  'podman',
  'lxc',
  'cali',
  'flannel',
  'cilium',
  'weave',
];

/** Why an address or interface cannot carry traffic between hosts; null when it can. */
export function hostLocalReason(bound: Bound): string | null {
  if (isLoopbackAddress(bound.address) || bound.interface === 'lo') return 'loopback';
  if (isLinkLocalAddress(bound.address)) return 'a link-local address';
  if (BRIDGE_PREFIXES.some((prefix) => bound.interface.startsWith(prefix)))
    return 'a container or VM bridge';
  return null;
}

const show = (bound: Bound) => `${bound.interface} ${bound.address}`;

export function auditFindings(log: NcclLog): Finding[] {
  const { ranks } = log;
  const findings: Finding[] = [];
  const multiHost =
    new Set(ranks.map((r) => r.host)).size > 1 ||
    ranks.some((r) => r.nccl.channels.some((c) => c.net !== null));
  findings.push(...silentFallback(ranks));
  if (multiHost) findings.push(...hostLocalDevices(ranks));
  findings.push(
    ...disagreements(ranks, 'network', (r) => r.nccl.network, 'failure'),
    ...disagreements(ranks, 'net plugin', pluginText, 'warning'),
    ...disagreements(
      ranks,
      'number of socket devices',
      (r) => count(r.nccl.devices.socket),
      'warning',
    ),
    ...disagreements(ranks, 'number of IB devices', (r) => count(r.nccl.devices.ib), 'warning'),
    ...disagreements(ranks, 'NCCL version', (r) => r.nccl.version, 'warning'),
    ...neverReachedNetwork(ranks),
    ...retries(ranks),
    ...warnLines(ranks),
  );
  return findings;
}

/**
 * The silent fall-back to TCP: a rank on `Socket` while the log shows RDMA
 * (IB ports) or a plugin's network on some rank, or a plugin that failed to
 * load. NCCL tries plugins, then IB, then Socket (net.cc ncclNetInit) and
 * says nothing louder than INFO when it falls through.
 */
function silentFallback(ranks: readonly RankRecord[]): Finding[] {
  const onSocket = ranks.filter((r) => usesSocket(r));
  if (onSocket.length === 0) return [];
  const faster = ranks.find((r) => r.nccl.network !== null && r.nccl.network !== 'Socket');
  const ib = ranks.find((r) => (r.nccl.devices.ib?.length ?? 0) > 0);
  const findings: Finding[] = [];
  const failedPlugin = onSocket.filter((r) => r.nccl.plugin?.state === 'failed');
  if (failedPlugin.length > 0) {
    const first = failedPlugin[0] as RankRecord;
    findings.push({
      level: 'failure',
      message: `the net plugin${first.nccl.plugin?.name ? ` ${first.nccl.plugin.name}` : ''} did not load or did not initialise, and NCCL fell back to TCP sockets (Using network Socket)`,
      ranks: failedPlugin.map(rankName),
      evidence: first.evidence.plugin ?? null,
    });
  }
  const rest = onSocket.filter((r) => r.nccl.plugin?.state !== 'failed');
  if (rest.length > 0 && (faster !== undefined || ib !== undefined)) {
    const why =
      faster !== undefined
        ? `${rankName(faster)} uses network ${faster.nccl.network}`
        : `${rankName(ib as RankRecord)} lists IB devices (${(ib as RankRecord).nccl.devices.ib?.map((d) => d.device).join(', ')})`;
    findings.push({
      level: 'failure',
      message: `NCCL runs on TCP sockets (Socket) where ${why}: the silent fall-back from RDMA`,
      ranks: rest.map(rankName),
      evidence:
        (rest[0] as RankRecord).evidence.network ??
        (rest[0] as RankRecord).evidence.channel ??
        null,
    });
  }
  return findings;
}

function usesSocket(rank: RankRecord): boolean {
  return (
    rank.nccl.network === 'Socket' || rank.nccl.channels.some((c) => c.net?.transport === 'Socket')
  );
}

/**
 * The bootstrap or a data device on loopback, a link-local address or a
 * container bridge in a job across hosts. NCCL's socket transport uses
 * every interface its walk matched, up to 16 (LAB.md; net_socket.cc), and
 * spreads channels over them: one unreachable device hangs the job.
 */
function hostLocalDevices(ranks: readonly RankRecord[]): Finding[] {
  const byProblem = new Map<string, { ranks: RankRecord[]; evidence: Evidence | null }>();
  const note = (key: string, rank: RankRecord, evidence: Evidence | undefined) => {
    const entry = byProblem.get(key) ?? { ranks: [], evidence: evidence ?? null };
    entry.ranks.push(rank);
    byProblem.set(key, entry);
  };
  for (const rank of ranks) {
    const bootstrap = rank.nccl.bootstrap;
    const reason = bootstrap === null ? null : hostLocalReason(bootstrap);
    if (bootstrap !== null && reason !== null)
      note(
        `NCCL's bootstrap is on ${reason} (${show(bootstrap)}) in a job across hosts`,
        rank,
        rank.evidence.bootstrap,
      );
    for (const device of rank.nccl.devices.socket ?? []) {
      const why = hostLocalReason(device);
      if (why === null) continue;
      const used = rank.nccl.channels.filter(
        (c) => c.net?.transport === 'Socket' && c.net.device === device.index,
      );
      note(
        `NCCL's socket device [${device.index}] is on ${why} (${show(device)}) in a job across hosts${used.length > 0 ? `; ${used.length} channel(s) go via NET/Socket/${device.index}` : ''}`,
        rank,
        rank.evidence.socketDevices,
      );
    }
  }
  return [...byProblem].map(([message, { ranks: named, evidence }]) => ({
    level: 'failure' as const,
    message,
    ranks: named.map(rankName),
    evidence,
  }));
}

/** Ranks that disagree: the values and who holds each, the less common ones named. */
function disagreements(
  ranks: readonly RankRecord[],
  what: string,
  valueAt: (rank: RankRecord) => string | null,
  level: Finding['level'],
): Finding[] {
  const groups = new Map<string, RankRecord[]>();
  for (const rank of ranks) {
    const value = valueAt(rank);
    if (value === null) continue;
    groups.set(value, [...(groups.get(value) ?? []), rank]);
  }
  if (groups.size < 2) return [];
  const sorted = [...groups].sort((a, b) => b[1].length - a[1].length);
  const odd = sorted.slice(1).flatMap(([, named]) => named);
  return [
    {
      level,
      message: `ranks disagree on the ${what}: ${sorted.map(([value, named]) => `${value} (${named.length})`).join(', ')}`,
      ranks: odd.map(rankName),
      evidence: null,
    },
  ];
}

function pluginText(rank: RankRecord): string | null {
  const plugin = rank.nccl.plugin;
  if (plugin === null) return null;
  return plugin.state === 'loaded' ? (plugin.name ?? 'loaded') : plugin.state;
}

function count(list: readonly unknown[] | null): string | null {
  return list === null ? null : String(list.length);
}

/**
 * A rank that never said `Using network` (init.cc, every tag) did not build
 * its communicator's network: a failure when others did (it stopped or hung
 * before), a warning when none did (the log holds no communicator: NCCL
 * stopped at the bootstrap, or INIT is not in NCCL_DEBUG_SUBSYS).
 */
function neverReachedNetwork(ranks: readonly RankRecord[]): Finding[] {
  const missing = ranks.filter((r) => r.nccl.network === null);
  if (missing.length === 0) return [];
  const someDid = missing.length < ranks.length;
  return [
    {
      level: someDid ? 'failure' : 'warning',
      message: someDid
        ? 'never reached `Using network`, which the other ranks did: stopped or hung before the data plane'
        : 'no rank reached `Using network`: the log holds no communicator (NCCL stopped at the bootstrap, or INIT is not in NCCL_DEBUG_SUBSYS)',
      ranks: missing.map(rankName),
      evidence: (missing[0] as RankRecord).evidence.bootstrap ?? null,
    },
  ];
}

function retries(ranks: readonly RankRecord[]): Finding[] {
  const retried = ranks.filter((r) => r.retries > 0);
  if (retried.length === 0) return [];
  return [
    {
      level: 'warning',
      message: `NCCL retried connects (${retried.reduce((n, r) => n + r.retries, 0)} lines): a peer not yet listening, or an address that does not answer`,
      ranks: retried.map(rankName),
      evidence: (retried[0] as RankRecord).evidence.retry ?? null,
    },
  ];
}

/** Each distinct WARN message once, with every rank that printed it and its first line. */
function warnLines(ranks: readonly RankRecord[]): Finding[] {
  const byMessage = new Map<string, { ranks: RankRecord[]; evidence: Evidence | null }>();
  for (const rank of ranks) {
    rank.warnings.forEach((warning, index) => {
      const entry = byMessage.get(warning) ?? {
        ranks: [],
        evidence: rank.warningLines[index] ?? null,
      };
      if (!entry.ranks.includes(rank)) entry.ranks.push(rank);
      byMessage.set(warning, entry);
    });
  }
  return [...byMessage].map(([message, entry]) => ({
    level: 'warning' as const,
    message: `NCCL WARN ${message}`,
    ranks: entry.ranks.map(rankName),
    evidence: entry.evidence,
  }));
}
