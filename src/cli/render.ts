/**
 * What `explain` prints (SPEC "Outputs"): the interface table with a verdict
 * each, the data plane (SPEC "RDMA transport"), the trace, the variables and
 * the command; and the one summary line every launch logs.
 */

import { formatEnv } from '../env/format-env.js';
import type { NcclRunError } from '../errors.js';
import { isLinkLocalAddress } from '../host/ip-address.js';
import { endpointSource } from '../job/rendezvous-master.js';
import type { NcclBind } from '../nccl/nccl-pick.js';
import { whereSet } from '../origin.js';
import type { MeetingPoint } from '../peers/meeting-point.js';
import type { Sections } from '../plan/derive.js';
import type { Learned, Plan } from '../plan/plan.js';
import { endpointText } from '../reach/endpoint.js';
import { interfaceTable, interfaceVerdicts, traceTable } from '../resolve/interface-table.js';
import { shellQuote } from '../shell-words.js';
import { dataPlaneSummary, transportJson, transportLines } from '../transport/transport-text.js';
import type { VerifyReport } from '../verify/report.js';

export function explainJson(plan: Plan) {
  const { decision, variables } = plan;
  return {
    hostname: plan.facts.hostname,
    interfaces: plan.facts.interfaces,
    routes: plan.facts.routes,
    rdma: plan.facts.rdma,
    portRange: plan.facts.portRange ?? null,
    // The rest of what the decision read on this host, for a faithful --facts replay.
    resolved: plan.facts.resolved,
    container: plan.facts.container,
    ...(plan.facts.unread === undefined ? {} : { unread: plan.facts.unread }),
    ncclConf: plan.facts.ncclConf,
    netPlugin: plan.facts.netPlugin,
    master: masterJson(plan.master),
    job: jobJson(plan.job),
    decision: decisionJson(decision),
    trace: decision.trace,
    env: variables.set,
    kept: variables.kept,
    keptFrom: Object.fromEntries(
      Object.entries(plan.keptFrom).map(([name, origin]) => [name, whereSet(origin)]),
    ),
    warnings: variables.warnings,
    command: plan.command,
    ...sectionsJson(plan),
    verify: plan.verify,
    probe: probeJson(plan.meeting),
  };
}

/** The sections a refusal keeps too (plan/derive.ts Sections). */
function sectionsJson(sections: Sections) {
  return {
    torch: {
      version: sections.stack.torch.version,
      source: sections.stack.torch.source,
      known: sections.stack.torch.known,
      via: sections.stack.torch.via,
      entry: sections.stack.torch.entry,
    },
    nccl: {
      version: sections.nccl.version,
      source: sections.nccl.source,
      library: sections.stack.nccl.library,
      rules: sections.nccl.rules,
      pick: sections.nccl.pick,
      devices: sections.nccl.devices,
      unseen: sections.nccl.unseen,
    },
    unmanaged: {
      // unmanaged.nccl: the bootstrap's pick, with the socket transport's devices beside it.
      nccl:
        sections.unmanaged.nccl === null
          ? null
          : { ...sections.unmanaged.nccl, devices: sections.unmanaged.ncclDevices },
      gloo: sections.unmanaged.gloo,
    },
    transport: transportJson(sections.transport),
    readiness: sections.readiness.findings,
  };
}

/** Where --verify peers (and `agree`) meet: the plan's one meeting point, as both rounds use it. */
function probeJson(meeting: MeetingPoint | null) {
  return (
    meeting && {
      port: meeting.port,
      target: meeting.target,
      hostsRegistry: meeting.hostsRegistry,
      membership: meeting.membership.kind,
      // Under Slurm: MUNGE too, where munged answers at the check (else the token alone, with a warning).
      munge: meeting.munge,
    }
  );
}

function probeLine(meeting: MeetingPoint | null): string[] {
  if (meeting === null) return [];
  const host = meeting.hostsRegistry
    ? 'this node hosts the registry'
    : 'the master hosts the registry';
  const proofs = [
    ...(meeting.munge === null ? [] : ['a MUNGE credential of the same user (under Slurm)']),
    ...(meeting.membership.kind === 'secret' ? ['the shared secret'] : []),
  ];
  const membership = proofs.length === 0 ? 'by token only' : `by ${proofs.join(' and ')}`;
  const name = meeting.master.host === meeting.target.address ? '' : ` (${meeting.master.host})`;
  return [
    `Probe      meets at ${endpointText(meeting.target)}${name}; ${host}; membership ${membership}`,
  ];
}

/**
 * check --json (SPEC "Outputs"): which interface was checked and why, every
 * warning (the plan's, then the verification's), and the result per peer;
 * at every level, `none` included.
 */
export function checkJson(plan: Plan, report: VerifyReport | null) {
  const shown = report ?? { level: 'none', ok: true, warnings: [], results: [] };
  return {
    decision: decisionJson(plan.decision),
    ...shown,
    // A node refused as not ready has failed its check, whatever the network said.
    ok: shown.ok && plan.readiness.refused === null,
    // The route warning is the plan's too (plan/derive.ts): once.
    warnings: [
      ...plan.variables.warnings,
      ...shown.warnings.filter((w) => !plan.variables.warnings.includes(w)),
    ],
    readiness: plan.readiness.findings,
    portRange: plan.facts.portRange ?? null,
  };
}

/**
 * SPEC "Cluster fill-in", --port-range: which ephemeral ports this node's
 * listeners get, for a firewall that opens only a range. explain's Ports
 * line, and a line check logs.
 */
export function portRangeText(facts: Plan['facts']): string {
  if (facts.portRange === undefined) {
    return 'ephemeral ports: net.ipv4.ip_local_port_range unknown (unreadable here, or not in the --facts snapshot)';
  }
  const [low, high] = facts.portRange;
  return `ephemeral ports ${low}-${high} (net.ipv4.ip_local_port_range of this network namespace, the node's in a hostNetwork pod): NCCL's, Gloo's and the probe mesh's listeners bind there`;
}

/** The Readiness section: each check's level and evidence, and the fix under it. */
function readinessLines(readiness: Plan['readiness']): string[] {
  const width = Math.max(...readiness.findings.map((finding) => finding.check.length));
  return readiness.findings.flatMap((finding) => [
    `  ${finding.check.padEnd(width)}  ${(finding.skipped ? 'skipped' : finding.level).padEnd(8)} ${finding.evidence}`,
    ...(finding.fix === null ? [] : [`  ${''.padEnd(width)}  ${''.padEnd(8)} fix: ${finding.fix}`]),
  ]);
}

function decisionJson({ interface: name, address, family, strategy, reason }: Plan['decision']) {
  return { interface: name, address, family, strategy, reason };
}

function jobJson(job: Plan['job']) {
  const { rdzvBackend, nnodes, nodeRank, standalone, cluster, controller } = job;
  return { rdzvBackend, nnodes, nodeRank, standalone, cluster, controller };
}

/**
 * explain --json when a step failed (SPEC "Outputs"): everything learned up
 * to the failure (the decision, when the chain had made it), and the error
 * with its exit status.
 */
export function explainFailureJson(learned: Learned, error: NcclRunError) {
  return {
    hostname: learned.facts?.hostname ?? null,
    interfaces: learned.facts?.interfaces ?? [],
    routes: learned.facts?.routes ?? [],
    rdma: learned.facts?.rdma,
    master: masterJson(learned.master),
    job: jobJson(learned.job),
    decision: learned.decision && decisionJson(learned.decision),
    trace: learned.trace,
    env: {},
    kept: {},
    warnings: learned.sections?.warnings ?? [],
    command: learned.command,
    ...(learned.sections === null ? {} : sectionsJson(learned.sections)),
    error: { message: error.message, exitCode: error.exitCode },
  };
}

/**
 * check --json when the plan failed before any check (a refusal): what
 * explain --json prints then, with check's verdict keys (SPEC "Outputs").
 */
export function checkFailureJson(learned: Learned, error: NcclRunError, level: string) {
  return {
    ...explainFailureJson(learned, error),
    level,
    ok: false,
    results: [],
  };
}

/** explain's text when a step failed: what was learned, then the error and its details. */
export function explainFailureText(learned: Learned, error: NcclRunError): string {
  // A NoInterfaceError's details are the interface table with verdicts and the trace.
  const table =
    learned.facts === null || error.details.length > 0
      ? []
      : ['Interfaces', ...interfaceTable(learned.facts, new Map()), ''];
  const { sections } = learned;
  const warnings = sections?.warnings ?? [];
  return [
    ...table,
    masterLine(learned.master),
    jobLine(learned.job),
    ...clusterLines(learned.job),
    ...(learned.decision === null ? [] : [decisionLine(learned.decision)]),
    ...(sections === null ? [] : sectionLines(sections, learned.facts?.rdma)),
    ...(sections === null ? [] : ['', 'Readiness', ...readinessLines(sections.readiness)]),
    ...(warnings.length === 0 ? [] : ['', 'Warnings', ...warnings.map((w) => `  ${w}`)]),
    '',
    `Error      (exit ${error.exitCode}) ${error.message}`,
    ...error.details.map((line) => `  ${line}`),
    '',
    'Command',
    `  ${learned.command.map(shellQuote).join(' ')}`,
    '',
  ].join('\n');
}

/** The Torch, NCCL, Unmanaged and Transport lines, a refusal's too. */
function sectionLines(sections: Sections, rdma: Plan['facts']['rdma']): string[] {
  return [
    `Torch      ${torchLine(sections.stack.torch)}`,
    `NCCL       ${ncclLine(sections.nccl)}`,
    ...devicesLine(sections.nccl.devices),
    ...sections.nccl.unseen.map((note) => `           may read what nccl-run cannot see: ${note}`),
    `Unmanaged  with nothing set, NCCL would bind ${unmanagedText(sections.unmanaged.nccl)} and Gloo ${unmanagedText(sections.unmanaged.gloo)}`,
    ...devicesLine(sections.unmanaged.ncclDevices),
    ...transportLines(sections.transport, rdma),
  ];
}

/** SPEC "Outputs": master `host`, `addresses`, `port`, `source` (where host and port came from). */
function masterJson(master: Plan['master']) {
  return (
    master && {
      host: master.host,
      addresses: master.addresses,
      port: master.port,
      source: endpointSource(master),
    }
  );
}

function masterLine(master: Plan['master']): string {
  const port = master?.port === 0 ? '0, a port torch picks' : String(master?.port);
  return master
    ? `Master     ${master.host}:${port} (${endpointSource(master)}) -> ${master.addresses.join(', ') || 'no address'}`
    : 'Master     none (--standalone, or torch 2.14 with one node and no port: torchrun makes its own c10d endpoint on localhost)';
}

function decisionLine(decision: Plan['decision']): string {
  return `Decision   ${decision.interface} ${decision.address} (${decision.family}) by ${decision.strategy}: ${decision.reason}`;
}

function jobLine(job: Plan['job']): string {
  const nodes =
    job.nnodes.min === job.nnodes.max ? job.nnodes.max : `${job.nnodes.min}:${job.nnodes.max}`;
  return `Job        ${nodes} node(s), rank ${job.nodeRank?.value ?? 'assigned at rendezvous'}, ${job.rdzvBackend} rendezvous`;
}

/** "Cluster    Kubeflow Trainer TrainJob (JobSet), read from PET_MASTER_ADDR, ..." */
function clusterLines(job: Plan['job']): string[] {
  const { controller } = job;
  if (controller === null) return [];
  const read =
    controller.variables.length === 0
      ? 'none of its variables set'
      : controller.variables.join(', ');
  return [`Cluster    ${controller.name}, read from ${read}`];
}

export function explainText(plan: Plan): string {
  const verdicts = interfaceVerdicts(plan.facts, plan.context, plan.decision);
  const { decision, master, variables } = plan;
  const lines = [
    'Interfaces',
    ...interfaceTable(plan.facts, verdicts),
    '',
    masterLine(master),
    jobLine(plan.job),
    ...clusterLines(plan.job),
    decisionLine(decision),
    `Ports      ${portRangeText(plan.facts)}`,
    ...sectionLines(plan, plan.facts.rdma),
    ...(plan.verify.capped === null ? [] : [`Verify     ${plan.verify.capped}`]),
    ...probeLine(plan.meeting),
    '',
    'Trace',
    ...traceTable(decision.trace),
    '',
    'Readiness',
    ...readinessLines(plan.readiness),
    '',
    'Variables',
    ...indent(formatEnv(variables.set, 'shell')),
    ...Object.entries(variables.kept).map(
      ([key, value]) =>
        `  ${key}=${shellQuote(value)}  (kept: set by you, in ${whereSet(plan.keptFrom[key] ?? { name: key, from: 'env' })})`,
    ),
  ];
  if (variables.warnings.length > 0)
    lines.push('', 'Warnings', ...variables.warnings.map((w) => `  ${w}`));
  lines.push('', 'Command', `  ${plan.command.map(shellQuote).join(' ')}`, '');
  return lines.join('\n');
}

/**
 * The one line every launch logs: interface, address, strategy and why, set
 * and kept; on a host with RDMA devices, the data plane NCCL will use.
 */
export function launchSummary(plan: Plan): string {
  const { decision, variables } = plan;
  const set = Object.entries(variables.set)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const kept = Object.keys(variables.kept);
  const dataPlane = dataPlaneSummary(plan.transport);
  return `using ${decision.interface} ${decision.address} (${decision.strategy}: ${decision.reason}); set ${set || 'nothing'}${kept.length > 0 ? `; kept ${kept.join(', ')}` : ''}${dataPlane === null ? '' : `; ${dataPlane}`}`;
}

/** "2.6.0 (/venv/.../torch/version.py), read through conda run -n train" */
function torchLine(torch: Plan['stack']['torch']): string {
  const version =
    torch.version ??
    "version unknown: nccl-run applies the newest torch's rules (--torch-version says which)";
  const through = torch.via.length > 0 ? `, read through ${torch.via.join(', then ')}` : '';
  const entry = torch.entry === 'launch' ? ', as python -m torch.distributed.launch' : '';
  return `${version} (${torch.source})${through}${entry}`;
}

/** "2.22.3 (NCCL_VERSION), rules 2.18-2.27: binds eth1 198.18.2.5 with these variables" */
function ncclLine(nccl: Plan['nccl']): string {
  const { version, source, rules, pick } = nccl;
  return `${version ?? 'version unknown'} (${source}), rules ${rules}: with these variables it binds ${bindText(pick)}`;
}

/** The socket transport's devices as NCCL logs them (`NET/Socket : Using [0]eth0:... [1]...`). */
function devicesLine(devices: readonly NcclBind[]): string[] {
  const listed = devices.map((device, index) => `[${index}]${device.interface} ${device.address}`);
  return [
    `           data-plane devices (NET/Socket): ${listed.length === 0 ? 'none' : listed.join(' ')}`,
  ];
}

function bindText(bind: NcclBind | null): string {
  return bind === null ? 'nothing (no interface found)' : `${bind.interface} ${bind.address}`;
}

/**
 * An unmanaged pick, and why it fails where it is link-local (SPEC "Usable":
 * nccl-run never chooses such an address, e.g. EKS's pod-id-link0 169.254.170.23).
 */
export function unmanagedText(bind: NcclBind | null): string {
  return bind !== null && isLinkLocalAddress(bind.address)
    ? `${bindText(bind)} (link-local: no peer can reach it; nccl-run never chooses it)`
    : bindText(bind);
}

function indent(text: string): string[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => `  ${line}`);
}
