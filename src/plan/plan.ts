/**
 * The data flow of one invocation (STYLE.md), as a procedure: what the user
 * set and the torch and NCCL the job runs decide how everything else is
 * read; then the job's shape, this host and the names, read once and
 * overlapped; the context the chain runs in (and, for `agree`, the round
 * with the other nodes); the chain (resolve/run-chain.ts); then derive.ts,
 * pure. Every command makes the same plan (SPEC "The stack"); verification
 * and launch happen in main, after whatever the command prints.
 */
import { readNetworkStatus } from '../cluster/multus-network-status.js';
import type { ClusterInfo } from '../cluster/scheduler.js';
import { detectCluster } from '../cluster/schedulers.js';
import { settingError } from '../errors.js';
import type { HostFacts } from '../host/host-facts.js';
import type { NameWait } from '../host/resolve-name.js';
import type { JobShape } from '../job/job-shape.js';
import { picksPort, portZeroElsewhere } from '../job/port-zero.js';
import { jobShapeOf } from '../job/read-job-shape.js';
import { isSingleNode } from '../job/single-node.js';
import { storeHostQuestion, storeRole } from '../job/store-role.js';
import type { Logger } from '../log.js';
import { ncclRules } from '../nccl/nccl-pick.js';
import { optionOrigin, type Settled } from '../options/settle-options.js';
import { reaches } from '../options/verify-level.js';
import { readNodeReadiness } from '../readiness/read-node-readiness.js';
import type { Decision, ExcludeRule, ResolveContext, TraceEntry } from '../resolve/decision.js';
import { buildExcludes } from '../resolve/excludes.js';
import { ChainFailedError, decidedBefore, runChain } from '../resolve/run-chain.js';
import { matchesMachineHostname } from '../torch/store-host-rule.js';
import { certainRefusal, parseTorchrunArgs } from '../torch/torchrun-args.js';
import { torchrunTable } from '../torch/torchrun-table.js';
import { findNetPlugin, pluginRecord } from '../transport/find-net-plugin.js';
import { pluginNics } from '../transport/plugin-nics.js';
import { derive, deriveSections, type Plan, type PlanInputs, type Sections } from './derive.js';
import { type MasterInfo, type Progress, readHostAndNames } from './host-and-names.js';
import { readStack } from './read-stack.js';
import { userEnvironment, userSettings } from './settings.js';
import { unknownTorchWarning } from './unknown-torch.js';

export type { Plan } from './derive.js';
export type { MasterInfo } from './host-and-names.js';

/**
 * What a plan had learned when one of its steps failed: `explain` prints it
 * with the error (SPEC "Outputs"), so that `explain --json > report.json`
 * captures the failing case. Kept beside the error, not in it.
 */
export interface Learned {
  job: JobShape;
  facts: HostFacts | null;
  master: MasterInfo | null;
  /** The chain's pick, when a step after it failed (a kept GLOO_SOCKET_IFNAME, the transport). */
  decision: Decision | null;
  trace: TraceEntry[];
  command: string[];
  /**
   * What could still be shown where the job's inputs were all read (the
   * chain refused, or a step after it failed): the stack, NCCL's and Gloo's
   * picks with nothing set, the data plane, the node's readiness, and their
   * warnings; null where the plan failed before (a name, the job's shape).
   */
  sections: (Sections & { warnings: string[] }) | null;
}

const learnedBefore = new WeakMap<object, Learned>();

/** What the plan that threw `error` had learned, when it got as far as the job's shape. */
export function learnedBeforeFailure(error: unknown): Learned | undefined {
  return typeof error === 'object' && error !== null ? learnedBefore.get(error) : undefined;
}

export async function makePlan(
  torchrunArgv: readonly string[],
  settled: Settled,
  env: NodeJS.ProcessEnv,
  /** For the `agree` round's progress, the only step that logs. */
  logger: Logger,
  /**
   * The process that becomes torchrun, whose limits the readiness checks
   * read: bin/nccl-run's shell (the hand-over's pid), else this one.
   */
  launcher: number | 'self' = 'self',
): Promise<Plan> {
  const progress: Progress & { job?: JobShape; decision?: Decision } = {};
  let inputs: PlanInputs | undefined;
  try {
    inputs = await readInputs(torchrunArgv, settled, env, progress, logger);
    progress.decision = runChain(settled.options.strategy, inputs.host.facts, inputs.context);
    const node = readNodeReadiness(inputs.settings.env, progress.decision.interface, { launcher });
    return derive(inputs, progress.decision, node, settled, torchrunArgv);
  } catch (error) {
    if (progress.job !== undefined && typeof error === 'object' && error !== null) {
      learnedBefore.set(error, {
        job: progress.job,
        facts: (await progress.factsRead?.catch(() => null)) ?? null,
        master: progress.master ?? null,
        decision: progress.decision ?? null,
        trace: progress.decision?.trace ?? (error instanceof ChainFailedError ? error.trace : []),
        command: [...settled.options.torchrun, ...torchrunArgv],
        sections:
          inputs === undefined
            ? null
            : sectionsBeside(inputs, progress.decision ?? null, settled, launcher),
      });
    }
    throw error;
  }
}

/** A failed plan's sections; null where even they cannot be made, so that the first error is the one reported. */
function sectionsBeside(
  inputs: PlanInputs,
  decision: Decision | null,
  settled: Settled,
  launcher: number | 'self',
): Learned['sections'] {
  try {
    const node = readNodeReadiness(inputs.settings.env, decision?.interface ?? null, { launcher });
    return deriveSections(inputs, decision, node, settled);
  } catch {
    return null;
  }
}

async function readInputs(
  torchrunArgv: readonly string[],
  settled: Settled,
  env: NodeJS.ProcessEnv,
  progress: Progress & { job?: JobShape },
  logger: Logger,
): Promise<PlanInputs> {
  const { options } = settled;
  // 1. The torch and NCCL the job runs decide how torchrun, NCCL and NCCL's files are read.
  const user = userEnvironment(settled, env);
  const stack = readStack(options.torchrun, user.env, {
    declared:
      options.torchVersion === null
        ? null
        : { version: options.torchVersion, origin: optionOrigin(settled.sources, 'torch-version') },
  });
  if (stack.clearedBy !== null) {
    throw settingError(
      optionOrigin(settled.sources, 'torchrun'),
      `${stack.clearedBy} starts torchrun with a clean environment, so none of the variables nccl-run exports (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, ...) would reach it: drop that option, or put nccl-run inside the wrapper (${stack.clearedBy} ... nccl-run ...)`,
    );
  }
  // A --facts snapshot's record of NCCL's files and net plugin, read in their place (SPEC: a
  // replay never reads them on this machine); a file that cannot be read fails below, as before.
  // Read once: readHostAndNames takes this same read (a 1,000-interface snapshot parses in
  // about 40 ms cold, 25 ms again: measured here, it was most of explain's extra cost).
  const snapshotRead =
    options.facts === null
      ? undefined
      : import('../host/facts-file.js').then(({ readFactsFile }) =>
          readFactsFile(options.facts as string),
        );
  const snapshot = await snapshotRead?.catch(() => undefined);
  const settings = userSettings(
    user,
    stack.nccl.version,
    options.force,
    snapshot?.ncclConf ?? null,
  );
  const torchrun = torchrunTable(stack.torch.version, stack.torch.entry);

  // 2. The job's shape, as that torchrun will see it; what it would certainly refuse, refused first.
  const args = parseTorchrunArgs(torchrunArgv, torchrun);
  const refusal = certainRefusal(args, stack.torch.version ?? '');
  if (refusal !== null) throw refusal;
  const cluster = detectCluster(options.cluster, settings.env);
  const job = jobShapeOf(args, settings.env, cluster);
  progress.job = job;

  // 3. This host and the names the job resolves.
  const hostRead = await readHostAndNames(
    job,
    settled,
    settings.commIdHost,
    progress,
    snapshotRead,
    nameWait(settled, cluster, logger),
  );
  // The net plugin NCCL loads, found as its dlopen would in the job's environment (2.26+ read
  // NCCL_NET_PLUGIN from NCCL's files too); nccl-run exports neither variable the search reads.
  const netPlugin = findNetPlugin({
    ncclVersion: stack.nccl.version,
    env: settings.env,
    ncclEnv: settings.ncclEnv,
    ...(snapshot?.netPlugin === undefined ? {} : { recorded: snapshot.netPlugin }),
  });
  // What explain --json's snapshot carries of them, for the next replay.
  const host = {
    ...hostRead,
    facts: {
      ...hostRead.facts,
      ncclConf: settings.conf.files,
      netPlugin: pluginRecord(netPlugin.plugin),
    },
  };
  const { facts, master, family } = host;
  const gpuNics = pluginNics(netPlugin, facts.interfaces, settings.env);
  const context: ResolveContext = {
    explicitInterfaces: options.iface,
    explicitOrigin: optionOrigin(settled.sources, 'iface'),
    userNcclIfname: settings.kept.ifname,
    userNcclFamily: settings.kept.family,
    ncclRules: ncclRules(stack.nccl.version),
    excludes: [
      ...buildExcludes(options.exclude, options.noDefaultExcludes),
      ...(gpuNics?.nics ?? []).map(
        (value): ExcludeRule => ({ kind: 'plugin', value, plugin: gpuNics?.plugin ?? '' }),
      ),
    ],
    family,
    master: master && { host: master.host, addresses: host.masterOfFamily },
    singleNode: isSingleNode(job, master?.addresses ?? [], facts),
    routesToMaster: host.routesToMaster,
    networkStatus: null,
    agreement: null,
  };
  context.networkStatus = await networkStatusFor(settled, facts, context, logger);

  const elsewhere = portZeroElsewhere(job, context.singleNode);
  if (elsewhere !== null) throw elsewhere;

  // 4. How far the check goes, this node's part in torch's store, and where the nodes meet:
  // decided once, for every check.
  const verify = verifyLevel(settled, job);
  const role =
    master !== null && reaches(verify.level, 'master')
      ? await storeRole(job, master, master.addresses, facts, family)
      : null;
  const meeting = reaches(verify.level, 'peers')
    ? await (await import('../peers/meeting-point.js')).meetingPoint({
        job,
        probePort: options.probePort,
        masterAddresses: master?.addresses ?? [],
        family,
        role,
        secretFile: options.probeSecretFile,
      })
    : null;
  // SPEC `agree`: every node publishes its interfaces through the master's
  // probe service before the chain runs; the strategy decides from that.
  if (options.strategy.includes('agree')) {
    const { publishNetworks } = await import('../peers/publish.js');
    context.agreement = await publishNetworks({ options, job, facts, context, meeting, logger });
  }
  // Where the torch is unknown, what of this job depends on its version: said once.
  const question = storeHostQuestion(job, facts, master?.addresses ?? []);
  const unknownTorch =
    stack.torch.known !== 'unknown'
      ? null
      : unknownTorchWarning({
          launcher: options.torchrun,
          why: stack.torch.source,
          entry: stack.torch.entry,
          argv: torchrunArgv,
          env: settings.env,
          cluster,
          applied: job,
          storeHost:
            question === null || host.machine === null
              ? null
              : matchesMachineHostname(question.endpoint, master?.addresses ?? [], host.machine),
        });
  return {
    settings,
    stack,
    torchrun,
    job,
    host,
    context,
    verify,
    role,
    meeting,
    unknownTorch,
    netPlugin,
  };
}

/**
 * A master's name that does not resolve yet, retried within --verify-timeout
 * where the check waits for the master anyway: a temporary failure
 * (EAI_AGAIN) everywhere; no such name, too, where names come late (a
 * Kubernetes worker pod that starts before the master pod's DNS record).
 */
function nameWait(
  { options }: Settled,
  cluster: ClusterInfo | null,
  logger: Logger,
): NameWait | undefined {
  if (!reaches(options.verify, 'master')) return undefined;
  const late = cluster?.namesComeLate === true;
  return {
    ms: options.verifyTimeout,
    retry: late ? ['EAI_AGAIN', 'ENOTFOUND', 'ENODATA'] : ['EAI_AGAIN'],
    onWait: (code) =>
      logger.info(
        `the master's name does not resolve yet (${code}); retrying up to ${Math.round(options.verifyTimeout / 1000)} s${late ? ": a pod's DNS record appears once the pod runs" : ''}`,
      ),
  };
}

/**
 * --network-status, read only where `multus` will be asked: it is in the
 * chain, the strategies before it do not decide first (an --iface or a
 * kept NCCL_SOCKET_IFNAME, a single-node job), and the file was given. A pod
 * whose networks are requested but not yet reported waits for kubelet to
 * refresh the file, up to --verify-timeout (cluster/multus-network-status.ts).
 */
async function networkStatusFor(
  { options }: Settled,
  facts: HostFacts,
  context: ResolveContext,
  logger: Logger,
): Promise<ResolveContext['networkStatus']> {
  const { networkStatus: file, strategy } = options;
  if (file === null || !strategy.includes('multus')) return null;
  if (decidedBefore('multus', strategy, facts, context)) return null;
  return readNetworkStatus(file, {
    waitMs: options.verifyTimeout,
    onWait: (request) =>
      logger.info(
        `waiting up to ${Math.round(options.verifyTimeout / 1000)} s for Multus' network-status in ${file}: the pod asks for ${request ?? 'networks'}, and kubelet writes their status into the file after the pod starts`,
      ),
  });
}

/**
 * --verify, and what caps it: a rendezvous at a port torch picks
 * (job/port-zero.ts) is this host's alone, with no store to reach before
 * torchrun starts, so nothing is checked beyond `local`.
 */
function verifyLevel({ options, sources }: Settled, job: JobShape): PlanInputs['verify'] {
  if (!picksPort(job) || !reaches(options.verify, 'master')) {
    return { level: options.verify, capped: null };
  }
  const given = optionOrigin(sources, 'verify');
  return {
    level: 'local',
    capped: `${given.from === 'default' ? 'the default ' : ''}--verify ${options.verify} checks only local: the rendezvous is on this host at a port torch picks (port 0), which nothing can reach before torchrun binds it`,
  };
}
