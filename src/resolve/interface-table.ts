/**
 * The interface table and trace that a NoInterfaceError carries in its
 * details (SPEC: "No strategy picks → exit 69 with the interface table and
 * the trace"). A Kubernetes node has hundreds of veth: long runs of
 * interfaces excluded by the same rule are folded into one line.
 */
import type { HostFacts, InterfaceFacts } from '../host/host-facts.js';
import type { TraceEntry } from './decision.js';

/** Rows shown for one exclude verdict before the rest are counted instead. */
const SHOWN_PER_EXCLUDE = 3;

export function interfaceTable(facts: HostFacts, verdicts: ReadonlyMap<string, string>): string[] {
  const header = ['NAME', 'STATE', 'ADDRESSES', 'KIND', 'VERDICT'];
  const rows: string[][] = [];
  const folded = new Map<string, number>();
  for (const iface of facts.interfaces) {
    const verdict = verdicts.get(iface.name) ?? '';
    if (verdict.startsWith('excluded')) {
      const seen = (folded.get(verdict) ?? 0) + 1;
      folded.set(verdict, seen);
      if (seen > SHOWN_PER_EXCLUDE) continue;
    }
    rows.push([iface.name, stateOf(iface), addressesOf(iface), iface.kind, verdict]);
  }
  const widths = header.map((_, column) =>
    Math.max(...[header, ...rows].map((row) => (row[column] ?? '').length)),
  );
  const format = (row: string[]) =>
    `  ${row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  ')}`;
  const more = [...folded]
    .filter(([, count]) => count > SHOWN_PER_EXCLUDE)
    .map(([verdict, count]) => `  ... and ${count - SHOWN_PER_EXCLUDE} more ${verdict}`);
  return ['interfaces:', format(header), ...rows.map(format), ...more];
}

export function traceLines(trace: readonly TraceEntry[]): string[] {
  if (trace.length === 0) return ['trace: (no strategy ran)'];
  const width = Math.max(...trace.map((entry) => entry.strategy.length));
  return [
    'trace:',
    ...trace.map((e) => `  ${e.strategy.padEnd(width)}  ${e.outcome.padEnd(7)}  ${e.reason}`),
  ];
}

function stateOf(iface: InterfaceFacts): string {
  const state = iface.operstate ?? 'state unknown';
  return iface.carrier === false ? `${state}, no carrier` : state;
}

function addressesOf(iface: InterfaceFacts): string {
  if (iface.addresses.length === 0) return '-';
  return iface.addresses.map((a) => `${a.address}/${a.prefixLength}`).join(' ');
}
