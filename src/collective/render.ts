/**
 * How the collective is shown: `check`'s Collective section (each node's
 * link as a bar against the median, the slow one marked, since people see
 * an outlier in a picture faster than in a column of numbers) and `run`'s one
 * summary line.
 */
import { rateText } from './rate-text.js';
import type { CollectiveReport } from './report.js';

/** Characters of a bar at the median; a bar runs to twice that at most. */
const MEDIAN_WIDTH = 20;

export function collectiveSummary(report: CollectiveReport): string {
  const largest = report.busBandwidth.at(-1);
  const bus =
    largest?.busBandwidth == null
      ? ''
      : `, bus bandwidth ${rateText(largest.busBandwidth)} at ${sizeText(largest.bytes)}`;
  return `verify collective: passed, ${report.backend} on ${report.ranks} ranks${bus}, in ${report.phases.totalS.toFixed(1)} s`;
}

export function collectiveText(report: CollectiveReport): string {
  const verdict = report.verdict.ok ? 'passed' : 'FAILED';
  const what =
    report.backend === null
      ? 'no result'
      : `${report.backend}, ${report.ranks} ranks on ${report.links.length} node(s), torch ${report.torch}`;
  const lines = [`Collective  ${what}: ${verdict}`];
  for (const size of report.busBandwidth) {
    const bus = size.busBandwidth === null ? '-' : rateText(size.busBandwidth);
    lines.push(`  all-reduce ${sizeText(size.bytes).padStart(8)}  bus bandwidth ${bus}`);
  }
  lines.push(...linkLines(report));
  lines.push(
    report.nccl.length === 0
      ? `  NCCL        no NCCL line on this node${report.backend === 'gloo' ? ' (Gloo ran: no rank saw a GPU)' : ''}`
      : `  NCCL        ${report.nccl.map(ncclText).join('; ')}`,
  );
  for (const finding of report.verdict.findings)
    lines.push(`  ${finding.level}: ${finding.message}`);
  return `${lines.join('\n')}\n`;
}

function linkLines(report: CollectiveReport): string[] {
  const median = report.medianLink;
  if (median === null || median <= 0) return [];
  const names = report.links.map((link) => `${link.name} ${link.address}`);
  const width = Math.max(...names.map((name) => name.length));
  return [
    `  links       each node's slowest way through the ring pass; | marks the median, ${rateText(median)}`,
    ...report.links.map((link, index) => {
      const rate = link.link ?? 0;
      const length = Math.min(2 * MEDIAN_WIDTH, Math.round((rate / median) * MEDIAN_WIDTH));
      const bar = Array.from({ length: 2 * MEDIAN_WIDTH + 1 }, (_, at) =>
        at === MEDIAN_WIDTH ? '|' : at < length ? '#' : ' ',
      ).join('');
      const mark = link.slow
        ? '  <- slow: under half the median of the others'
        : link.outlier
          ? '  <- outlier: >10 % and >1 std dev below the mean'
          : '';
      return `    ${(names[index] as string).padEnd(width)}  ${bar}  ${rateText(rate)}${mark}`;
    }),
  ];
}

function ncclText(rank: CollectiveReport['nccl'][number]): string {
  const bound = rank.nccl.bootstrap === null ? '-' : rank.nccl.bootstrap.interface;
  return `pid ${rank.pid}: bootstrap ${bound}, network ${rank.nccl.network ?? '-'}`;
}

function sizeText(bytes: number): string {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes / (1 << 20)} MiB`;
  if (bytes >= 1 << 10 && bytes % (1 << 10) === 0) return `${bytes / (1 << 10)} KiB`;
  return `${bytes} B`;
}
