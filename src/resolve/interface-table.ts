/**
 * The interface table and the trace, as `explain` prints them and as a
 * NoInterfaceError carries them in its details (SPEC: "No strategy picks →
 * exit 69 with the interface table and the trace"). A Kubernetes node has
 * hundreds of veth: long runs of interfaces excluded by the same rule are
 * folded into one line.
 */
import type { HostFacts, InterfaceFacts } from '../host/host-facts.js';
import { type Rejection, rejection, rejectionText } from './candidates.js';
import type { Decision, ResolveContext, TraceEntry } from './decision.js';

/** Each interface's verdict: chosen, usable, or why it is not a candidate. */
export type Verdict = 'chosen' | 'usable' | Rejection;

export function interfaceVerdicts(
  facts: HostFacts,
  context: ResolveContext,
  decision: Decision | null,
): Map<string, Verdict> {
  const verdicts = new Map<string, Verdict>();
  for (const iface of facts.interfaces) {
    const verdict =
      decision?.interface === iface.name ? 'chosen' : (rejection(iface, context) ?? 'usable');
    verdicts.set(iface.name, verdict);
  }
  return verdicts;
}

/**
 * The verdict as explain's table writes it: chosen, usable, excluded
 * (prefix docker), down, no IPv4 address, link-local only, bond member of
 * bond0, loopback; the same words the strategies give as reasons.
 */
export function verdictText(verdict: Verdict): string {
  return typeof verdict === 'string' ? verdict : rejectionText(verdict);
}

/** Rows shown for one exclude verdict before the rest are counted instead. */
const SHOWN_PER_EXCLUDE = 3;

export function interfaceTable(facts: HostFacts, verdicts: ReadonlyMap<string, Verdict>): string[] {
  const rows: string[][] = [];
  const folded = new Map<string, number>();
  for (const iface of facts.interfaces) {
    const found = verdicts.get(iface.name);
    const verdict = found === undefined ? '' : verdictText(found);
    if (typeof found === 'object' && found.kind === 'excluded') {
      const seen = (folded.get(verdict) ?? 0) + 1;
      folded.set(verdict, seen);
      if (seen > SHOWN_PER_EXCLUDE) continue;
    }
    rows.push([
      iface.name,
      stateOf(iface),
      addressesOf(iface),
      speedOf(iface),
      kindOf(iface),
      verdict,
    ]);
  }
  const more = [...folded]
    .filter(([, count]) => count > SHOWN_PER_EXCLUDE)
    .map(([verdict, count]) => `  ... and ${count - SHOWN_PER_EXCLUDE} more ${verdict}`);
  return [
    ...columns([['NAME', 'STATE', 'ADDRESSES', 'SPEED', 'KIND', 'VERDICT'], ...rows]),
    ...more,
  ];
}

/** One line per strategy that ran: its name, picked/skipped/fatal, and why. */
export function traceTable(trace: readonly TraceEntry[]): string[] {
  if (trace.length === 0) return ['  (no strategy ran)'];
  // The outcome column keeps one width whatever the outcomes, so traces read alike.
  return columns(trace.map((entry) => [entry.strategy, entry.outcome.padEnd(7), entry.reason]));
}

/** Left-aligned columns two spaces apart, indented by two; the last column is not padded. */
export function columns(rows: readonly string[][]): string[] {
  const widths = rows.reduce<number[]>(
    (acc, row) => row.map((cell, i) => Math.max(acc[i] ?? 0, cell.length)),
    [],
  );
  return rows.map((row) =>
    `  ${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')}`.trimEnd(),
  );
}

function stateOf(iface: InterfaceFacts): string {
  const state = iface.operstate ?? 'unknown';
  return iface.carrier === false && state !== 'down' ? `${state}, no carrier` : state;
}

function addressesOf(iface: InterfaceFacts): string {
  if (iface.addresses.length === 0) return '-';
  return iface.addresses.map((a) => `${a.address}/${a.prefixLength}`).join(' ');
}

function speedOf(iface: InterfaceFacts): string {
  if (iface.speedMbps === null) return '-';
  return iface.speedMbps >= 1000 ? `${iface.speedMbps / 1000}G` : `${iface.speedMbps}M`;
}

function kindOf(iface: InterfaceFacts): string {
  return iface.rdma ? `${iface.kind} (${iface.rdma.device})` : iface.kind;
}
