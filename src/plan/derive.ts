/**
 * The second half of a plan, pure: from what was read (PlanInputs) and the
 * chain's decision, the variables to set and keep, the warnings in the
 * order a user fixes them (their own settings, then the host, then the
 * job's addresses), what NCCL and Gloo will bind, what NCCL may read that
 * nccl-run cannot see, and the data plane.
 */

import { bridgeContainerWarning } from '../env/bridge-container.js';
import { decideVariables, type Variables } from '../env/decide-variables.js';
import { ncclPicture } from '../env/nccl-picture.js';
import { routeWarnings } from '../env/route-warnings.js';
import { vpnWarning } from '../env/vpn-warning.js';
import type { JobShape } from '../job/job-shape.js';
import type { StoreRole } from '../job/store-role.js';
import type { NcclBind, NcclRules } from '../nccl/nccl-pick.js';
import { lintNcclSettings } from '../nccl/settings-lint.js';
import { unseenNcclSettings } from '../nccl/unseen-settings.js';
import { optionOrigin, type Settled } from '../options/settle-options.js';
import type { VerifyLevel } from '../options/verify-level.js';
import { type Origin, whereSet } from '../origin.js';
import type { MeetingPoint } from '../peers/meeting-point.js';
import type { NodeReadiness } from '../readiness/node-readiness.js';
import type { Decision, ResolveContext } from '../resolve/decision.js';
import type { TorchrunTable } from '../torch/torchrun-table.js';
import { assessTransport, type Transport } from '../transport/assess-transport.js';
import type { NetPluginSearch } from '../transport/find-net-plugin.js';
import { requiredNcclNet } from '../transport/transport-requirement.js';
import type { HostAndNames, MasterInfo } from './host-and-names.js';
import type { Stack } from './read-stack.js';
import { assessReadiness, type Readiness, readinessNeeds } from './readiness-needs.js';
import type { UserSettings } from './settings.js';

/** Everything a plan reads from outside this process, read once (plan.ts). */
export interface PlanInputs {
  settings: UserSettings;
  stack: Stack;
  /** The torch that will run, as its torchrun reads argv (torch/torchrun-table.ts). */
  torchrun: TorchrunTable;
  job: JobShape;
  host: HostAndNames;
  /** The context the chain ran with, the other nodes' networks included for `agree`. */
  context: ResolveContext;
  /** How far the pre-flight goes: --verify, and the reason it was capped; null when not. */
  verify: { level: VerifyLevel; capped: string | null };
  role: StoreRole | null;
  meeting: MeetingPoint | null;
  /** Where the torch is unknown, what of this job depends on its version (unknown-torch.ts); else null. */
  unknownTorch: string | null;
  /** The net plugin NCCL will load (transport/find-net-plugin.ts). */
  netPlugin: NetPluginSearch;
}

export interface Plan {
  job: JobShape;
  facts: HostAndNames['facts'];
  master: MasterInfo | null;
  context: ResolveContext;
  routesToMaster: HostAndNames['routesToMaster'];
  decision: Decision;
  variables: Variables;
  /** Where each kept variable came from: the environment, the env file, or one of NCCL's files. */
  keptFrom: Record<string, Origin>;
  /** The torch and the NCCL the job will run (SPEC "The stack"). */
  stack: Stack;
  /** The NCCL the job loads, its rules, and what it binds with the environment torchrun gets. */
  nccl: {
    version: string | null;
    source: string;
    rules: NcclRules;
    pick: NcclBind | null;
    /** The socket transport's devices, in NCCL's index order; the first is the bootstrap's pick. */
    devices: NcclBind[];
    /** What NCCL may read that nccl-run cannot see (nccl/unseen-settings.ts). */
    unseen: string[];
  };
  /** What NCCL and Gloo would bind if nccl-run set nothing (SPEC "Outputs"). */
  unmanaged: { nccl: NcclBind | null; gloo: NcclBind | null; ncclDevices: NcclBind[] };
  /** The data plane NCCL will use, and --require-transport's verdict (SPEC "RDMA transport"). */
  transport: Transport;
  /** What the job needs from this node, checked (SPEC "Readiness"). */
  readiness: Readiness;
  /** How far the pre-flight goes (PlanInputs.verify). */
  verify: PlanInputs['verify'];
  /** Hosts for --verify peers. */
  peers: string[];
  /** This node's part in torch's store (job/store-role.ts), at --verify master and peers; else null. */
  role: StoreRole | null;
  /** Where the nodes meet for --verify peers and `agree` (peers/meeting-point.ts); null below peers. */
  meeting: MeetingPoint | null;
  /** The launcher and torchrun's arguments, untouched. */
  command: string[];
  /** The child's whole environment. */
  childEnv: Record<string, string>;
}

/**
 * The sections a plan shows whether or not the chain picked an interface
 * (SPEC "Outputs": a refusal's explain keeps them): the stack, what NCCL
 * binds and would bind unmanaged, the data plane, the node's readiness.
 */
export interface Sections {
  stack: Stack;
  nccl: Plan['nccl'];
  unmanaged: Plan['unmanaged'];
  transport: Transport;
  readiness: Readiness;
}

export function derive(
  inputs: PlanInputs,
  decision: Decision,
  /** This node's facts for the readiness checks (readiness/read-node-readiness.ts). */
  node: NodeReadiness,
  settled: Settled,
  torchrunArgv: readonly string[],
): Plan {
  const { options } = settled;
  const { job, host, context, settings, stack } = inputs;
  const { facts, master, routesToMaster } = host;
  const exported = decideVariables({
    decision,
    job,
    options,
    ncclNet: requiredNcclNet(options.requireTransport, inputs.netPlugin, facts.rdma),
    facts,
    env: settings.ncclEnv,
    singleNode: context.singleNode,
    routesToMaster,
    masterAddresses: master?.addresses ?? [],
    masterAddrAddresses: host.masterAddrAddresses,
    machine: host.machine,
    torch: stack.torch.version,
    excludes: context.excludes,
    origin: settings.originOf,
  });
  const childEnv = { ...settings.env, ...exported.set };
  const { sections, settingWarnings, deviceWarnings, bindWarning } = dataPath(
    inputs,
    decision,
    node,
    settled,
    childEnv,
  );
  return {
    job,
    facts,
    master,
    context,
    routesToMaster,
    decision,
    variables: {
      ...exported,
      warnings: [
        ...stack.warnings,
        ...(inputs.unknownTorch === null ? [] : [inputs.unknownTorch]),
        ...settingWarnings,
        ...nonNull(vpnWarning(facts, decision, context)),
        ...nonNull(bridgeContainerWarning(facts, decision, context)),
        ...(facts.unread ?? []).map(
          (path) =>
            `${path} could not be read (no /sys here, as in a bare chroot): interface kinds, states, speeds and MTUs are unknown; an interface holding 127.0.0.1 or ::1 is taken as the loopback`,
        ),
        ...exported.warnings,
        ...deviceWarnings,
        ...sectionWarnings(sections),
        ...(bindWarning === null ? [] : [bindWarning]),
        // --verify local's route warning (env/route-warnings.ts), explain's too.
        ...routeWarnings(facts, decision, routesToMaster),
      ],
    },
    keptFrom: Object.fromEntries(
      Object.keys(exported.kept).map((name) => [name, settings.originOf(name)]),
    ),
    ...sections,
    verify: inputs.verify,
    peers: options.peers ?? job.clusterPeers,
    role: inputs.role,
    meeting: inputs.meeting,
    command: [...options.torchrun, ...torchrunArgv],
    childEnv,
  };
}

/**
 * The sections of a plan whose chain failed (a refusal, exit 69), or that
 * failed after it: the job's environment is the user's alone, as nccl-run
 * exports nothing; `decision` is the chain's pick where it made one.
 */
export function deriveSections(
  inputs: PlanInputs,
  decision: Decision | null,
  node: NodeReadiness,
  settled: Settled,
): Sections & { warnings: string[] } {
  const { sections, settingWarnings, deviceWarnings, bindWarning } = dataPath(
    inputs,
    decision,
    node,
    settled,
    inputs.settings.env,
  );
  return {
    ...sections,
    warnings: [
      ...inputs.stack.warnings,
      ...(inputs.unknownTorch === null ? [] : [inputs.unknownTorch]),
      ...settingWarnings,
      ...deviceWarnings,
      ...sectionWarnings(sections),
      ...(bindWarning === null ? [] : [bindWarning]),
    ],
  };
}

/** What NCCL, Gloo, the data plane and the node make of the job's environment `childEnv`. */
function dataPath(
  inputs: PlanInputs,
  decision: Decision | null,
  node: NodeReadiness,
  settled: Settled,
  childEnv: Readonly<Record<string, string>>,
): {
  sections: Sections;
  settingWarnings: string[];
  deviceWarnings: string[];
  bindWarning: string | null;
} {
  const { options } = settled;
  const { job, host, context, settings, stack } = inputs;
  const { facts, routesToMaster } = host;
  // What NCCL reads in the job: torchrun's environment over NCCL's files.
  const ncclJobEnv = { ...settings.conf.values, ...childEnv };
  const unseen = unseenNcclSettings(stack.nccl, stack.envPlugin, childEnv, ncclJobEnv);
  const keptIfname = settings.kept.ifname;
  const picture = ncclPicture({
    facts,
    context,
    decision,
    userNcclEnv: settings.ncclEnv,
    jobNcclEnv: ncclJobEnv,
    userEnv: settings.env,
    keptIfname:
      keptIfname === null
        ? null
        : { value: keptIfname, from: settings.originOf('NCCL_SOCKET_IFNAME') },
    commIdAddress: host.commIdAddress,
    ncclVersion: stack.nccl.version,
    hostnameAddresses: host.hostnameAddresses,
  });
  // NCCL reads its IB settings as it reads the socket ones.
  const transport = assessTransport({
    rdma: facts.rdma,
    ncclEnv: ncclJobEnv,
    required: options.requireTransport,
    requiredBy: optionOrigin(settled.sources, 'require-transport'),
    originOf: settings.originOf,
    netPlugin: inputs.netPlugin,
    facts,
  });
  const readiness = assessReadiness(
    readinessNeeds({
      job,
      torchVersion: stack.torch.version,
      ncclVersion: stack.nccl.version,
      ncclEnv: ncclJobEnv,
      transport: transport.verdict.kind,
      requireTransport: options.requireTransport,
      role: inputs.role,
      singleNode: context.singleNode,
      decision,
      facts,
      routesToMaster,
    }),
    node,
    options.skipCheck,
  );
  return {
    sections: {
      stack,
      nccl: {
        version: stack.nccl.version,
        source: stack.nccl.source,
        rules: context.ncclRules,
        pick: picture.pick,
        devices: picture.devices,
        unseen,
      },
      unmanaged: picture.unmanaged,
      transport,
      readiness,
    },
    settingWarnings: [
      ...lintNcclSettings(userNcclSettings(settings, options.envFile), stack.nccl.version),
      ...picture.settingWarnings,
    ],
    deviceWarnings: picture.deviceWarnings,
    bindWarning: picture.bindWarning,
  };
}

/**
 * The user's NCCL_* variables (any case: NCCL's getenv is not) for the
 * settings lint, each with where it was set: the environment, the env file
 * by its path, or NCCL's own file. NCCL's files hold only the names the
 * environment does not set (nccl/nccl-conf.ts).
 */
function userNcclSettings(
  settings: UserSettings,
  envFile: string | null,
): Record<string, { value: string; where: string }> {
  const seen: Record<string, { value: string; where: string }> = {};
  for (const [name, value] of Object.entries({ ...settings.conf.values, ...settings.env })) {
    if (!name.toUpperCase().startsWith('NCCL_')) continue;
    const origin = settings.originOf(name);
    const where =
      origin.from === 'env-file' && envFile !== null ? `the env file ${envFile}` : whereSet(origin);
    seen[name] = { value, where };
  }
  return seen;
}

function nonNull(warning: string | null): string[] {
  return warning === null ? [] : [warning];
}

/** The data plane's warnings, then what NCCL may read unseen. */
function sectionWarnings(sections: Sections): string[] {
  return [
    ...sections.transport.warnings,
    ...sections.nccl.unseen.map(
      (note) => `${note}; NCCL's pick may differ from the one reported here`,
    ),
  ];
}
