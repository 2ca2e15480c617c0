/**
 * The data flow of one invocation, top to bottom (STYLE.md):
 * job shape (and the NCCL it loads, with NCCL's own files) → host facts →
 * master → decision → variables → what NCCL and Gloo will bind.
 * Verification and launch happen in main, after whatever the command prints.
 */
import { detectCluster } from './cluster/schedulers.js';
import { exportVariables, type Variables } from './env/export-variables.js';
import { ncclPicture } from './env/nccl-picture.js';
import { userValue } from './env/user-value.js';
import { ConfigError, NoInterfaceError, originText } from './errors.js';
import type { HostFacts, RouteAnswer } from './host/host-facts.js';
import { familyOf, isLinkLocalAddress } from './host/ip-address.js';
import { readNcclConf } from './host/nccl-conf.js';
import { findNcclVersion, type NcclVersion } from './host/nccl-version.js';
import { readHostFacts } from './host/read-host-facts.js';
import { routeTo } from './host/routes.js';
import type { JobShape } from './job/job-shape.js';
import { readJobShape } from './job/read-job-shape.js';
import type { Settled } from './options/settle-options.js';
import type { Decision, ResolveContext, TraceEntry } from './resolve/decision.js';
import { buildExcludes } from './resolve/excludes.js';
import { resolveMaster } from './resolve/master.js';
import { commIdHost, type NcclBind, type NcclRules, ncclRules } from './resolve/nccl-pick.js';
import { runChain } from './resolve/run-chain.js';
import { settleFamily } from './resolve/settle-family.js';
import { isSingleNode } from './resolve/single-node.js';
import { assessTransport, type Transport } from './transport/assess-transport.js';

export interface MasterInfo {
  host: string;
  addresses: string[];
  port: number;
  source: string;
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
  keptFrom: Record<string, string>;
  /** The NCCL the job loads, its rules, and what it binds with the environment torchrun gets. */
  nccl: { version: NcclVersion | null; rules: NcclRules; pick: NcclBind | null };
  /** What NCCL and Gloo would bind if nccl-run set nothing (SPEC "Outputs"). */
  unmanaged: { nccl: NcclBind | null; gloo: NcclBind | null };
  /** The data plane NCCL will use, and --require-transport's verdict (SPEC "RDMA transport"). */
  transport: Transport;
  /** Hosts for --verify peers. */
  peers: string[];
  /** The launcher and torchrun's arguments, untouched. */
  command: string[];
  /** The child's whole environment. */
  childEnv: Record<string, string>;
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
}

export async function makePlan(
  torchrunArgv: readonly string[],
  settled: Settled,
  env: NodeJS.ProcessEnv,
  options: { linkDetails?: boolean } = {},
): Promise<Plan> {
  const progress: Progress = {};
  try {
    return await planSteps(torchrunArgv, settled, env, options, progress);
  } catch (error) {
    if (progress.job !== undefined && typeof error === 'object' && error !== null) {
      learnedBefore.set(error, {
        job: progress.job,
        facts: (await progress.factsRead?.catch(() => null)) ?? null,
        master: progress.master ?? null,
        trace: error instanceof NoInterfaceError ? error.trace : [],
        command: [...settled.options.torchrun, ...torchrunArgv],
      });
    }
    throw error;
  }
}

async function planSteps(
  torchrunArgv: readonly string[],
  settled: Settled,
  env: NodeJS.ProcessEnv,
  { linkDetails = true }: { linkDetails?: boolean },
  progress: Progress,
): Promise<Plan> {
  const { options, envFileExtras } = settled;
  // The env file's extra keys count as set by the user, below the process environment.
  const processEnv = definedOnly(env);
  const userEnv = { ...envFileExtras, ...processEnv };
  // NCCL's own files are the user's settings too, below the environment, as NCCL reads them;
  // they never go into the child's environment (NCCL reads them itself).
  const ncclVersion = findNcclVersion(userEnv);
  const rules = ncclRules(ncclVersion?.version ?? null);
  const conf = readNcclConf(userEnv, ncclVersion?.version ?? null);
  const ncclView = { ...conf.values, ...userEnv };

  const cluster = detectCluster(options.cluster, userEnv);
  const job = readJobShape(torchrunArgv, userEnv, cluster);
  progress.job = job;
  // The host's facts are read while the master's name resolves and the kernel
  // is asked for the route to it: three independent waits, overlapped.
  const factsRead =
    options.facts !== null
      ? import('./host/facts-file.js').then(({ readFactsFile }) =>
          readFactsFile(options.facts as string),
        )
      : readHostFacts({ linkDetails });
  // Handled below; this only keeps a failure from counting as unhandled meanwhile.
  factsRead.catch(() => {});
  progress.factsRead = factsRead;
  progress.master = job.master && { ...job.master, addresses: [] };
  const masterAddresses = job.master ? await resolveMaster(job.master.host) : [];
  const master = job.master && { ...job.master, addresses: masterAddresses };
  progress.master = master;
  if (master && masterAddresses.length > 0 && masterAddresses.every(isLinkLocalAddress)) {
    // SPEC: 78 at once, not a minute of EINVAL retries at the connect.
    throw new ConfigError(
      `the master ${master.host} (${master.source}) resolves only to the link-local ${masterAddresses.join(', ')}, which NCCL, Gloo and torch's store cannot use without a scope: give the master's global address or a name that resolves to one`,
    );
  }
  const family = settleFamily(options.family, masterAddresses);
  const wanted = masterAddresses.filter((address) => familyOf(address) === family);
  if (master && wanted.length === 0) {
    // Only an explicit --family can disagree with the master (auto follows it).
    const origin = settled.sources.family ? originText(settled.sources.family) : '--family';
    throw new ConfigError(
      `${origin}=${options.family} conflicts with the master ${master.host}, which resolves only to ${masterAddresses.join(', ')}; use --family auto or ${family === 'ipv4' ? 'ipv6' : 'ipv4'}`,
    );
  }
  const [facts, routesToMaster] = await Promise.all([
    factsRead,
    wanted.length > 0 ? routeTo(wanted, factsRead, options.facts === null) : [],
  ]);
  const commId = ncclView.NCCL_COMM_ID;
  const [hostnameAddresses, commIdAddress] = await Promise.all([
    lookupAll(facts.hostname),
    commId === undefined ? null : resolveCommId(commId),
  ]);

  const context: ResolveContext = {
    explicitInterfaces: options.iface,
    userNcclIfname: options.force ? null : userValue(ncclView, 'NCCL_SOCKET_IFNAME'),
    userNcclFamily: options.force ? null : (ncclView.NCCL_SOCKET_FAMILY ?? null),
    ncclRules: rules,
    excludes: buildExcludes(options.exclude, options.noDefaultExcludes),
    family,
    master: master && { host: master.host, addresses: wanted },
    singleNode: isSingleNode(job, masterAddresses, facts),
    routesToMaster,
    agreement: null,
  };
  // SPEC `agree`: every node publishes its interfaces through the master's
  // probe service before the chain runs; the strategy decides from that.
  if (options.strategy.includes('agree')) {
    const { publishNetworks } = await import('./verify/publish-networks.js');
    context.agreement = await publishNetworks({
      options,
      job,
      facts,
      context,
      masterAddresses,
    });
  }
  const decision = runChain(options.strategy, facts, context);
  const originOf = (name: string) =>
    conf.origins[name] ?? (name in processEnv ? 'the environment' : 'the env file');
  const exported = await exportVariables({
    decision,
    facts,
    job,
    env: ncclView,
    force: options.force,
    ncclDebug: options.ncclDebug,
    ncclDebugSubsys: options.ncclDebugSubsys,
    routesToMaster,
    masterAddresses,
    excludes: context.excludes,
    origin: originOf,
    requireTransport: options.requireTransport,
  });

  const childEnv = { ...userEnv, ...exported.set };
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
      keptIfname === undefined
        ? null
        : { value: keptIfname, from: keptFrom.NCCL_SOCKET_IFNAME ?? 'the environment' },
    commIdAddress,
    hostnameAddresses,
  });
  // NCCL reads its IB settings as it reads the socket ones: torchrun's environment over its files.
  const transport = assessTransport({
    rdma: facts.rdma,
    ncclEnv: { ...conf.values, ...childEnv },
    required: options.requireTransport,
    requiredBy: originText(
      settled.sources['require-transport'] ?? { name: '--require-transport', from: 'flag' },
    ),
    setIn: originOf,
  });
  const variables: Variables = {
    ...exported,
    warnings: [
      ...picture.settingWarnings,
      ...exported.warnings,
      ...transport.warnings,
      ...(picture.bindWarning === null ? [] : [picture.bindWarning]),
    ],
  };

  return {
    job,
    facts,
    master,
    context,
    routesToMaster,
    decision,
    variables,
    keptFrom,
    nccl: { version: ncclVersion, rules, pick: picture.pick },
    unmanaged: picture.unmanaged,
    transport,
    peers: options.peers ?? job.clusterPeers,
    command: [...options.torchrun, ...torchrunArgv],
    childEnv,
  };
}

/** What a name resolves to, in getaddrinfo's order, as Gloo resolves the hostname; none on failure. */
async function lookupAll(name: string): Promise<string[]> {
  if (name === '') return [];
  return resolveMaster(name).catch(() => []);
}

/** NCCL_COMM_ID's address: ncclSocketGetAddrFromString takes getaddrinfo's first answer. */
async function resolveCommId(value: string): Promise<string | null> {
  const host = commIdHost(value);
  if (host === null) return null;
  return (await lookupAll(host))[0] ?? null;
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
