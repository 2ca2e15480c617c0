/**
 * What `explain` prints (SPEC "Outputs"): the interface table with a verdict
 * each, the trace, the variables and the command; and the one summary line
 * every launch logs.
 */

import { formatEnv } from '../env/format-env.js';
import type { InterfaceFacts } from '../host/host-facts.js';
import type { Plan } from '../plan.js';
import { interfaceVerdicts } from '../resolve/verdict.js';
import { shellQuote } from './shell-quote.js';

export function explainJson(plan: Plan) {
  const { decision, variables } = plan;
  return {
    hostname: plan.facts.hostname,
    interfaces: plan.facts.interfaces,
    routes: plan.facts.routes,
    master: plan.master,
    job: {
      rdzvBackend: plan.job.rdzvBackend,
      nnodes: plan.job.nnodes,
      nodeRank: plan.job.nodeRank,
      standalone: plan.job.standalone,
      cluster: plan.job.cluster,
    },
    decision: {
      interface: decision.interface,
      address: decision.address,
      family: decision.family,
      strategy: decision.strategy,
      reason: decision.reason,
    },
    trace: decision.trace,
    env: variables.set,
    kept: variables.kept,
    warnings: variables.warnings,
    command: plan.command,
  };
}

export function explainText(plan: Plan): string {
  const verdicts = interfaceVerdicts(plan.facts, plan.context, plan.decision);
  const rows = plan.facts.interfaces.map((iface) => [
    iface.name,
    stateOf(iface),
    iface.addresses.map((a) => `${a.address}/${a.prefixLength}`).join(' ') || '-',
    speedOf(iface),
    iface.rdma ? `${iface.kind} (${iface.rdma.device})` : iface.kind,
    verdicts.get(iface.name) ?? '',
  ]);
  const { decision, master, variables } = plan;
  const lines = [
    'Interfaces',
    ...table([['NAME', 'STATE', 'ADDRESSES', 'SPEED', 'KIND', 'VERDICT'], ...rows]),
    '',
    master
      ? `Master     ${master.host}:${master.port} (${master.source}) -> ${master.addresses.join(', ')}`
      : 'Master     none (standalone: torchrun makes its own endpoint on localhost)',
    `Job        ${plan.job.nnodes.min === plan.job.nnodes.max ? plan.job.nnodes.max : `${plan.job.nnodes.min}:${plan.job.nnodes.max}`} node(s), rank ${plan.job.nodeRank?.value ?? 'assigned at rendezvous'}, ${plan.job.rdzvBackend} rendezvous`,
    `Decision   ${decision.interface} ${decision.address} (${decision.family}) by ${decision.strategy}: ${decision.reason}`,
    '',
    'Trace',
    ...table(decision.trace.map((entry) => [entry.strategy, entry.outcome, entry.reason])),
    '',
    'Variables',
    ...indent(formatEnv(variables.set, 'shell')),
    ...Object.entries(variables.kept).map(
      ([key, value]) => `  ${key}=${shellQuote(value)}  (kept: set by you)`,
    ),
  ];
  if (variables.warnings.length > 0)
    lines.push('', 'Warnings', ...variables.warnings.map((w) => `  ${w}`));
  lines.push('', 'Command', `  ${plan.command.map(shellQuote).join(' ')}`, '');
  return lines.join('\n');
}

/** The one line every launch logs: interface, address, strategy and why, set and kept. */
export function launchSummary(plan: Plan): string {
  const { decision, variables } = plan;
  const set = Object.entries(variables.set)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const kept = Object.keys(variables.kept);
  return `using ${decision.interface} ${decision.address} (${decision.strategy}: ${decision.reason}); set ${set || 'nothing'}${kept.length > 0 ? `; kept ${kept.join(', ')}` : ''}`;
}

function stateOf(iface: InterfaceFacts): string {
  const state = iface.operstate ?? 'unknown';
  return iface.carrier === false && state !== 'down' ? `${state}, no carrier` : state;
}

function speedOf(iface: InterfaceFacts): string {
  if (iface.speedMbps === null) return '-';
  return iface.speedMbps >= 1000 ? `${iface.speedMbps / 1000}G` : `${iface.speedMbps}M`;
}

function table(rows: string[][]): string[] {
  const widths = rows.reduce<number[]>(
    (acc, row) => row.map((cell, i) => Math.max(acc[i] ?? 0, cell.length)),
    [],
  );
  return rows.map((row) =>
    `  ${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')}`.trimEnd(),
  );
}

function indent(text: string): string[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => `  ${line}`);
}
