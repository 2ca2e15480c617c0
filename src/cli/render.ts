/**
 * What `explain` prints (SPEC "Outputs"): the interface table with a verdict
 * each, the trace, the variables and the command; and the one summary line
 * every launch logs.
 */

import { formatEnv } from '../env/format-env.js';
import type { Plan } from '../plan.js';
import { interfaceTable, traceTable } from '../resolve/interface-table.js';
import type { NcclBind } from '../resolve/nccl-pick.js';
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
    keptFrom: plan.keptFrom,
    warnings: variables.warnings,
    command: plan.command,
    nccl: {
      version: plan.nccl.version?.version ?? null,
      versionSource: plan.nccl.version?.source ?? null,
      rules: plan.nccl.rules,
      pick: plan.nccl.pick,
    },
    unmanaged: plan.unmanaged,
  };
}

export function explainText(plan: Plan): string {
  const verdicts = interfaceVerdicts(plan.facts, plan.context, plan.decision);
  const { decision, master, variables } = plan;
  const lines = [
    'Interfaces',
    ...interfaceTable(plan.facts, verdicts),
    '',
    master
      ? `Master     ${master.host}:${master.port} (${master.source}) -> ${master.addresses.join(', ')}`
      : 'Master     none (standalone: torchrun makes its own endpoint on localhost)',
    `Job        ${plan.job.nnodes.min === plan.job.nnodes.max ? plan.job.nnodes.max : `${plan.job.nnodes.min}:${plan.job.nnodes.max}`} node(s), rank ${plan.job.nodeRank?.value ?? 'assigned at rendezvous'}, ${plan.job.rdzvBackend} rendezvous`,
    `Decision   ${decision.interface} ${decision.address} (${decision.family}) by ${decision.strategy}: ${decision.reason}`,
    `NCCL       ${ncclLine(plan)}`,
    `Unmanaged  with nothing set, NCCL would bind ${bindText(plan.unmanaged.nccl)} and Gloo ${bindText(plan.unmanaged.gloo)}`,
    '',
    'Trace',
    ...traceTable(decision.trace),
    '',
    'Variables',
    ...indent(formatEnv(variables.set, 'shell')),
    ...Object.entries(variables.kept).map(
      ([key, value]) =>
        `  ${key}=${shellQuote(value)}  (kept: set by you, in ${plan.keptFrom[key] ?? 'the environment'})`,
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

/** "2.22.3 (NCCL_VERSION), rules 2.19-2.27: binds eth1 198.18.2.5 with these variables" */
function ncclLine(plan: Plan): string {
  const { version, rules, pick } = plan.nccl;
  const found = version === null ? 'version unknown' : `${version.version} (${version.source})`;
  return `${found}, rules ${rules}: with these variables it binds ${bindText(pick)}`;
}

function bindText(bind: NcclBind | null): string {
  return bind === null ? 'nothing (no interface found)' : `${bind.interface} ${bind.address}`;
}

function indent(text: string): string[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => `  ${line}`);
}
