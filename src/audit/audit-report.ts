/**
 * audit's output: a table of ranks and the findings (text), or one object
 * `{ranks, findings}` (--json) whose names are explain --json's (`nccl.version`,
 * `interface`, `address`), so explain's `nccl.pick` and a rank's
 * `nccl.bootstrap` can be compared field by field.
 */
import type { Finding } from './findings.js';
import type { Bound } from './nccl-events.js';
import type { RankRecord } from './rank-record.js';

export interface AuditReport {
  ranks: RankRecord[];
  findings: Finding[];
}

export function auditJson({ ranks, findings }: AuditReport) {
  return {
    ranks: ranks.map(({ evidence: _evidence, warningLines: _lines, ...rank }) => rank),
    findings,
  };
}

export function auditText({ ranks, findings }: AuditReport): string {
  const rows = ranks.map((rank) => [
    rank.rank === null ? '-' : String(rank.rank),
    `${rank.host}:${rank.pid}`,
    String(rank.device),
    rank.nccl.version ?? '-',
    boundText(rank.nccl.bootstrap),
    rank.nccl.network ?? '-',
    pluginText(rank),
    devicesText(rank),
    channelsText(rank),
  ]);
  const header = [
    'rank',
    'host:pid',
    'gpu',
    'nccl',
    'bootstrap',
    'network',
    'plugin',
    'devices',
    'channels via',
  ];
  const lines = table([header, ...rows]);
  const settings = settingsLines(ranks);
  if (settings.length > 0) lines.push('', 'settings NCCL read from the environment:', ...settings);
  lines.push('');
  if (findings.length === 0) lines.push('no findings');
  for (const finding of findings) {
    lines.push(`${finding.level === 'failure' ? 'FAIL' : 'WARN'} ${finding.message}`);
    if (finding.ranks.length > 0) lines.push(`     ranks: ${summarise(finding.ranks)}`);
    if (finding.evidence !== null)
      lines.push(
        `     ${finding.evidence.source}:${finding.evidence.line}: ${finding.evidence.text}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

function boundText(bound: Bound | null): string {
  return bound === null ? '-' : `${bound.interface} ${bound.address}`;
}

function pluginText(rank: RankRecord): string {
  const plugin = rank.nccl.plugin;
  if (plugin === null) return '-';
  return plugin.name === null ? plugin.state : `${plugin.state} ${plugin.name}`;
}

function devicesText(rank: RankRecord): string {
  const { socket, ib } = rank.nccl.devices;
  const parts: string[] = [];
  if (socket !== null)
    parts.push(`socket ${socket.map((d) => `[${d.index}]${d.interface}`).join(' ') || 'none'}`);
  if (ib !== null)
    parts.push(
      `ib ${ib.map((d) => `[${d.index}]${d.device}:${d.port}/${d.link}`).join(' ') || 'none'}`,
    );
  return parts.join('; ') || '-';
}

/** The NET devices the channels go through, each once: `Socket/0 x4`. */
function channelsText(rank: RankRecord): string {
  const counts = new Map<string, number>();
  for (const channel of rank.nccl.channels) {
    const key =
      channel.net === null
        ? (channel.via.split('/')[0] as string)
        : `${channel.net.transport}/${channel.net.device}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => `${key} x${n}`).join(', ') || '-';
}

function settingsLines(ranks: readonly RankRecord[]): string[] {
  const values = new Map<string, Set<string>>();
  for (const rank of ranks)
    for (const [name, value] of Object.entries(rank.settings))
      values.set(name, (values.get(name) ?? new Set()).add(value));
  return [...values].sort().map(([name, set]) => `  ${name}=${[...set].join(' | ')}`);
}

function summarise(names: readonly string[]): string {
  return names.length <= 8
    ? names.join(', ')
    : `${names.slice(0, 8).join(', ')} and ${names.length - 8} more`;
}

function table(rows: readonly string[][]): string[] {
  const widths = (rows[0] as string[]).map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] as number))
      .join('  ')
      .trimEnd(),
  );
}
