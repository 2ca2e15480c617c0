/**
 * The data flow of one invocation (STYLE.md), in two stages:
 * - readInputs: everything from outside, read once and overlapped where it
 *   can be: NCCL's version and files, the scheduler, the job's shape, the
 *   host's facts, the names (master, hostname, NCCL_COMM_ID), the kernel's
 *   routes to the master, and for `agree` the round with the other nodes;
 * - the chain (resolve/run-chain.ts), then derive: pure. The variables, the
 *   warnings, what NCCL and Gloo will bind, the data plane.
 * Verification and launch happen in main, after whatever the command prints.
 */
import { detectCluster } from './cluster/schedulers.js';
import { decideVariables, type Variables } from './env/decide-variables.js';
import { userValue } from './env/exported-variables.js';
import { otherMasterAddr } from './env/master-network.js';
import { ncclPicture } from './env/nccl-picture.js';
import { ConfigError } from './errors.js';
import type { Family, HostFacts, RouteAnswer } from './host/host-facts.js';
import { familyOf, isLinkLocalAddress } from './host/ip-address.js';
import { readHostFacts } from './host/read-host-facts.js';
import { addressesOf, resolveMaster } from './host/resolve-name.js';
import { routeTo } from './host/routes.js';
import type { JobShape, RendezvousEndpoint } from './job/job-shape.js';
import { readJobShape } from './job/read-job-shape.js';
import { endpointSource } from './job/rendezvous-master.js';
import { type StoreRole, storeHostQuestion, storeRole } from './job/store-role.js';
import type { Logger } from './log.js';
import { type NcclConf, readNcclConf } from './nccl/nccl-conf.js';
import { commIdHost, type NcclBind, type NcclRules, ncclRules } from './nccl/nccl-pick.js';
import { unseenNcclSettings } from './nccl/unseen-settings.js';
import { optionOrigin, type Settled } from './options/settle-options.js';
import { type Origin, originText } from './origin.js';
import type { MeetingPoint } from './peers/meeting-point.js';
import type { Decision, ResolveContext, TraceEntry } from './resolve/decision.js';
import { buildExcludes } from './resolve/excludes.js';
import { ChainFailedError, runChain } from './resolve/run-chain.js';
import { isSingleNode } from './resolve/strategies/local.js';
import { readStack, type Stack } from './stack/read-stack.js';
import { type MachineNames, machineNames } from './torch/store-host-rule.js';
import { otherVersionWarning } from './torch/torchrun-args.js';
import { torchrunTable } from './torch/torchrun-table.js';
import { assessTransport, type Transport } from './transport/assess-transport.js';

/** The rendezvous endpoint (job-shape.ts), with every address its host resolves to. */
export interface MasterInfo extends RendezvousEndpoint {
  addresses: string[];
}

export interface Plan {
  job: JobShape;
  facts: HostFacts;
  master: MasterInfo | null;
  context: ResolveContext;
  routesToMaster: RouteAnswer[];
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
    /** What NCCL may read that nccl-run cannot see (nccl/unseen-settings.ts). */
    unseen: string[];
  };
  /** What NCCL and Gloo would bind if nccl-run set nothing (SPEC "Outputs"). */
  unmanaged: { nccl: NcclBind | null; gloo: NcclBind | null };
  /** The data plane NCCL will use, and --require-transport's verdict (SPEC "RDMA transport"). */
  transport: Transport;
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

/** Everything a plan reads from outside this process, read once. */
interface Inputs {
  /** The env file's extra keys below the process environment: what the user set. */
  userEnv: Record<string, string>;
  processEnv: Record<string, string>;
  stack: Stack;
  rules: NcclRules;
  /** NCCL's own files: the user's settings too, below the environment, as NCCL reads them. */
  conf: NcclConf;
  job: JobShape;
  facts: HostFacts;
  master: MasterInfo | null;
  routesToMaster: RouteAnswer[];
  /** The context the chain runs with, the other nodes' networks included for `agree`. */
  context: ResolveContext;
  /** What the hostname resolves to, in getaddrinfo's order, as Gloo and torch's store rule resolve it. */
  hostnameAddresses: string[];
  commIdAddress: string | null;
  masterAddrAddresses: string[];
  machine: MachineNames | null;
  role: StoreRole | null;
  meeting: MeetingPoint | null;
}

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
}

const learnedBefore = new WeakMap<object, Learned>();

/** What the plan that threw `error` had learned, when it got as far as the job's shape. */
export function learnedBeforeFailure(error: unknown): Learned | undefined {
  return typeof error === 'object' && error !== null ? learnedBefore.get(error) : undefined;
}

interface Progress {
  job?: JobShape;
  factsRead?: Promise<HostFacts>;
  master?: MasterInfo | null;
  decision?: Decision;
}

export async function makePlan(
  torchrunArgv: readonly string[],
  settled: Settled,
  env: NodeJS.ProcessEnv,
  /** For the `agree` round's progress, the only step that logs. */
  logger: Logger,
): Promise<Plan> {
  const progress: Progress = {};
  try {
    const inputs = await readInputs(torchrunArgv, settled, env, progress, logger);
    progress.decision = runChain(settled.options.strategy, inputs.facts, inputs.context);
    return derive(inputs, progress.decision, settled, torchrunArgv);
  } catch (error) {
    if (progress.job !== undefined && typeof error === 'object' && error !== null) {
      learnedBefore.set(error, {
        job: progress.job,
        facts: (await progress.factsRead?.catch(() => null)) ?? null,
        master: progress.master ?? null,
        decision: progress.decision ?? null,
        trace: progress.decision?.trace ?? (error instanceof ChainFailedError ? error.trace : []),
        command: [...settled.options.torchrun, ...torchrunArgv],
      });
    }
    throw error;
  }
}

async function readInputs(
  torchrunArgv: readonly string[],
  settled: Settled,
  env: NodeJS.ProcessEnv,
  progress: Progress,
  logger: Logger,
): Promise<Inputs> {
  const { options } = settled;
  const processEnv = definedOnly(env);
  const userEnv = { ...settled.envFileExtras, ...processEnv };
  // Which torch and NCCL the job runs decides how torchrun and NCCL are read.
  const stack = readStack(options.torchrun, userEnv);
  // NCCL's files never go into the child's environment: NCCL reads them itself.
  const conf = readNcclConf(userEnv, stack.nccl.version);

  const ncclView = { ...conf.values, ...userEnv };
  const rules = ncclRules(stack.nccl.version);
  const userNcclIfname = options.force ? null : userValue(ncclView, 'NCCL_SOCKET_IFNAME');
  const commIdName = ncclView.NCCL_COMM_ID === undefined ? null : commIdHost(ncclView.NCCL_COMM_ID);

  const job = readJobShape(
    torchrunArgv,
    userEnv,
    detectCluster(options.cluster, userEnv),
    torchrunTable(stack.torch.version),
  );
  progress.job = job;
  // The host's facts are read while the names resolve and the kernel is asked
  // for the route to the master: independent waits, overlapped. The same
  // facts for every command (SPEC "The stack"): whether down links' addresses
  // are read depends on the host alone (read-host-facts.ts).
  const factsRead =
    options.facts !== null
      ? import('./host/facts-file.js').then(({ readFactsFile }) =>
          readFactsFile(options.facts as string),
        )
      : readHostFacts();
  // Handled below; this only keeps a failure from counting as unhandled meanwhile.
  factsRead.catch(() => {});
  progress.factsRead = factsRead;
  const masterAddr = otherMasterAddr(job);
  const otherLookups = Promise.all([
    commIdName === null ? [] : addressesOf(commIdName),
    masterAddr === null ? [] : addressesOf(masterAddr),
  ]);
  progress.master = job.master && { ...job.master, addresses: [] };
  const masterAddresses = job.master ? await resolveMaster(job.master.host) : [];
  const master = job.master && { ...job.master, addresses: masterAddresses };
  progress.master = master;
  const family = settleFamily(settled, master);
  const wanted = masterAddresses.filter((address) => familyOf(address) === family);
  const [facts, routesToMaster] = await Promise.all([
    factsRead,
    wanted.length > 0 ? routeTo(wanted, factsRead, options.facts === null) : [],
  ]);
  const [hostnameAddresses, [commIdAddresses, masterAddrAddresses]] = await Promise.all([
    addressesOf(facts.hostname),
    otherLookups,
  ]);
  const question = storeHostQuestion(job, facts, masterAddresses);
  const machine =
    question === null
      ? null
      : await machineNames(question.endpoint, facts.hostname, hostnameAddresses);

  const context: ResolveContext = {
    explicitInterfaces: options.iface,
    explicitOrigin: optionOrigin(settled.sources, 'iface'),
    userNcclIfname,
    userNcclFamily: options.force ? null : (ncclView.NCCL_SOCKET_FAMILY ?? null),
    ncclRules: rules,
    excludes: buildExcludes(options.exclude, options.noDefaultExcludes),
    family,
    master: master && { host: master.host, addresses: wanted },
    singleNode: isSingleNode(job, masterAddresses, facts),
    routesToMaster,
    agreement: null,
  };
  // This node's part in torch's store, for the checks that meet it: decided once, for all of them.
  const role =
    master !== null && (options.verify === 'master' || options.verify === 'peers')
      ? await storeRole(job, master, masterAddresses, facts, family)
      : null;
  // One meeting point for both rounds that meet there, agree's and the peers check's.
  const meeting =
    options.verify === 'peers'
      ? await (await import('./peers/meeting-point.js')).meetingPoint({
          job,
          probePort: options.probePort,
          masterAddresses,
          family,
          role,
          secretFile: options.probeSecretFile,
          env: userEnv,
        })
      : null;
  // SPEC `agree`: every node publishes its interfaces through the master's
  // probe service before the chain runs; the strategy decides from that.
  if (options.strategy.includes('agree')) {
    const { publishNetworks } = await import('./peers/publish.js');
    context.agreement = await publishNetworks({ options, job, facts, context, meeting, logger });
  }
  return {
    userEnv,
    processEnv,
    stack,
    rules,
    conf,
    job,
    facts,
    master,
    routesToMaster,
    context,
    hostnameAddresses,
    // ncclSocketGetAddrFromString takes getaddrinfo's first answer.
    commIdAddress: commIdAddresses[0] ?? null,
    masterAddrAddresses,
    machine,
    role,
    meeting,
  };
}

/** From the inputs and the chain's decision alone: the variables, the warnings, what NCCL and Gloo will bind. */
function derive(
  inputs: Inputs,
  decision: Decision,
  settled: Settled,
  torchrunArgv: readonly string[],
): Plan {
  const { options } = settled;
  const { job, facts, master, context, conf, userEnv, routesToMaster } = inputs;
  const originOf = (name: string): Origin =>
    name in conf.origins
      ? { name, from: 'nccl-conf', file: conf.origins[name] }
      : {
          name,
          from: name in inputs.processEnv ? (name.startsWith('PET_') ? 'pet' : 'env') : 'env-file',
        };
  const exported = decideVariables({
    decision,
    job,
    options,
    facts,
    env: { ...conf.values, ...userEnv },
    routesToMaster,
    masterAddresses: master?.addresses ?? [],
    masterAddrAddresses: inputs.masterAddrAddresses,
    machine: inputs.machine,
    torch: inputs.stack.torch.version,
    excludes: context.excludes,
    origin: originOf,
  });

  const childEnv = { ...userEnv, ...exported.set };
  const { stack } = inputs;
  const mismatch = otherVersionWarning(
    torchrunArgv,
    torchrunTable(stack.torch.version),
    stack.torch.version ?? '',
  );
  const unseen = unseenNcclSettings(stack.nccl, stack.envPlugin, childEnv, {
    ...conf.values,
    ...childEnv,
  });
  const keptFrom = Object.fromEntries(
    Object.keys(exported.kept).map((name) => [name, originOf(name)]),
  );
  const keptIfname = exported.kept.NCCL_SOCKET_IFNAME;
  const picture = ncclPicture({
    facts,
    context,
    decision,
    conf,
    userEnv,
    childEnv,
    keptIfname:
      keptIfname === undefined ? null : { value: keptIfname, from: originOf('NCCL_SOCKET_IFNAME') },
    commIdAddress: inputs.commIdAddress,
    hostnameAddresses: inputs.hostnameAddresses,
  });
  // NCCL reads its IB settings as it reads the socket ones: torchrun's environment over its files.
  const transport = assessTransport({
    rdma: facts.rdma,
    ncclEnv: { ...conf.values, ...childEnv },
    required: options.requireTransport,
    requiredBy: optionOrigin(settled.sources, 'require-transport'),
    originOf,
  });
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
        ...picture.settingWarnings,
        ...exported.warnings,
        ...transport.warnings,
        ...unseen.map((note) => `${note}; NCCL's pick may differ from the one reported here`),
        ...(mismatch === null ? [] : [mismatch]),
        ...(picture.bindWarning === null ? [] : [picture.bindWarning]),
      ],
    },
    keptFrom,
    stack: inputs.stack,
    nccl: {
      version: inputs.stack.nccl.version,
      source: inputs.stack.nccl.source,
      rules: inputs.rules,
      pick: picture.pick,
      unseen,
    },
    unmanaged: picture.unmanaged,
    transport,
    peers: options.peers ?? job.clusterPeers,
    role: inputs.role,
    meeting: inputs.meeting,
    command: [...options.torchrun, ...torchrunArgv],
    childEnv,
  };
}

/**
 * SPEC --family: auto follows the master's (first) address, else IPv4. A
 * master NCCL, Gloo and the store cannot use, or one only an explicit
 * --family disagrees with, is a configuration error at once.
 */
function settleFamily({ options, sources }: Settled, master: MasterInfo | null): Family {
  const addresses = master?.addresses ?? [];
  if (master && addresses.length > 0 && addresses.every(isLinkLocalAddress)) {
    // SPEC: 78 at once, not a minute of EINVAL retries at the connect.
    throw new ConfigError(
      `the master ${master.host} (${endpointSource(master)}) resolves only to the link-local ${addresses.join(', ')}, which NCCL, Gloo and torch's store cannot use without a scope: give the master's global address or a name that resolves to one`,
    );
  }
  const family: Family =
    options.family !== 'auto'
      ? options.family
      : addresses[0] !== undefined && familyOf(addresses[0]) === 'ipv6'
        ? 'ipv6'
        : 'ipv4';
  if (master && !addresses.some((address) => familyOf(address) === family)) {
    // Only an explicit --family can disagree with the master (auto follows it).
    const origin = originText(optionOrigin(sources, 'family'));
    throw new ConfigError(
      `${origin}=${options.family} conflicts with the master ${master.host}, which resolves only to ${addresses.join(', ')}; use --family auto or ${family === 'ipv4' ? 'ipv6' : 'ipv4'}`,
    );
  }
  return family;
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
