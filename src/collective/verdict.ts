/**
 * The collective's verdict from its figures (SPEC "Verification", level
 * collective), the same on every node since every node reads the same
 * gathered figures:
 * - below --min-bus-bandwidth at the largest size (the one nearest the
 *   link's speed) fails;
 * - a node whose link runs at less than half the median of the others'
 *   fails, named with its host, address and rate;
 * - a node more than 10 % and more than one standard deviation below the
 *   mean of all nodes is a warning: the gentler rule of Megatron-LM's
 *   straggler detector, as issue 44 states it, which flags a node that is
 *   slower without being broken.
 * What NCCL's own lines say (nccl-check.ts) and a collective that did not
 * finish (timeout.ts) add their findings beside these.
 */
import { busBandwidth } from './bus-bandwidth.js';
import { type NodeLink, nodeLinks } from './links.js';
import { rateText } from './rate-text.js';
import type { CollectiveResult } from './result.js';
import { mean, median, standardDeviation } from './stats.js';

export type CollectiveRule =
  | 'timeout'
  | 'failed'
  | 'interface'
  | 'transport'
  | 'bus bandwidth'
  | 'slow link'
  | 'outlier';

export interface CollectiveFinding {
  level: 'failure' | 'warning';
  rule: CollectiveRule;
  message: string;
  /** The nodes it names (nccl-run's names), empty where it is about the whole job. */
  nodes: string[];
}

/** A link under this share of the median of the others' fails (SPEC). */
export const SLOW_LINK_SHARE = 0.5;
/** The gentler rule: this far below the mean, and more than one standard deviation. */
export const OUTLIER_SHARE = 0.9;

export interface BusBandwidthAt {
  bytes: number;
  /** Bytes per second. */
  busBandwidth: number | null;
  seconds: number;
}

export interface Figures {
  busBandwidth: BusBandwidthAt[];
  links: (NodeLink & { slow: boolean; outlier: boolean })[];
  /** The median of every node's link, bytes per second; null below two nodes. */
  medianLink: number | null;
}

export function collectiveFigures(result: CollectiveResult): Figures {
  const links = nodeLinks(result);
  const rates = links.map((link) => link.link).filter((rate) => rate !== null);
  const slow = slowLinks(links);
  const outliers = outlierLinks(links);
  return {
    busBandwidth: result.allReduce.map(({ bytes, seconds }) => ({
      bytes,
      seconds,
      busBandwidth: busBandwidth(bytes, seconds, result.ranks),
    })),
    links: links.map((link) => ({
      ...link,
      slow: slow.includes(link),
      outlier: outliers.includes(link),
    })),
    medianLink: rates.length < 2 ? null : median(rates),
  };
}

/** Nodes whose link is under SLOW_LINK_SHARE of the median of the others'. */
export function slowLinks(links: readonly NodeLink[]): NodeLink[] {
  return links.filter((link) => {
    if (link.link === null) return false;
    const others = links
      .filter((other) => other !== link && other.link !== null)
      .map((other) => other.link as number);
    const typical = median(others);
    return typical !== null && link.link < SLOW_LINK_SHARE * typical;
  });
}

/** Nodes more than 10 % and more than one standard deviation below the mean of all. */
export function outlierLinks(links: readonly NodeLink[]): NodeLink[] {
  const rates = links.map((link) => link.link).filter((rate) => rate !== null);
  const average = mean(rates);
  const spread = standardDeviation(rates);
  if (average === null || spread === null || rates.length < 3) return [];
  return links.filter(
    (link) =>
      link.link !== null && link.link < OUTLIER_SHARE * average && link.link < average - spread,
  );
}

export function figureFindings(
  figures: Figures,
  minBusBandwidth: number | null,
): CollectiveFinding[] {
  const findings: CollectiveFinding[] = [];
  const largest = figures.busBandwidth.at(-1);
  if (minBusBandwidth !== null && largest?.busBandwidth != null) {
    if (largest.busBandwidth < minBusBandwidth) {
      findings.push({
        level: 'failure',
        rule: 'bus bandwidth',
        message: `the all-reduce of ${largest.bytes} bytes ran at a bus bandwidth of ${rateText(largest.busBandwidth)}, below --min-bus-bandwidth ${rateText(minBusBandwidth)}`,
        nodes: [],
      });
    }
  }
  const typical = figures.medianLink;
  for (const link of figures.links) {
    if (link.link === null) continue;
    const where = `${link.name} (host ${link.host}, ${link.address})`;
    if (link.slow) {
      findings.push({
        level: 'failure',
        rule: 'slow link',
        message: `${where}: its link runs at ${rateText(link.link)}, under half the median of the others${typical === null ? '' : ` (the median of every node: ${rateText(typical)})`}; a ring collective runs at its slowest link on every rank`,
        nodes: [link.name],
      });
    } else if (link.outlier) {
      findings.push({
        level: 'warning',
        rule: 'outlier',
        message: `${where}: its link runs at ${rateText(link.link)}, more than 10 % and more than one standard deviation below the mean of the nodes`,
        nodes: [link.name],
      });
    }
  }
  return findings;
}
