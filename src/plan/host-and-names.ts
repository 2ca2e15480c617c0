/**
 * This host's facts and every name the job's processes will resolve, read
 * once and overlapped (independent waits): the host's interfaces and routes
 * (or a --facts snapshot), the master as torch resolves it, the kernel's
 * route to it, the hostname (Gloo and torch's store rule resolve it), a
 * --master-addr beside a c10d endpoint, NCCL_COMM_ID's host, and what
 * torch's store rule asks of this machine. The same facts for every command
 * (SPEC "The stack"): whether down links' addresses are read depends on the
 * host alone (host/read-host-facts.ts).
 */
import { otherMasterAddr } from '../env/master-network.js';
import type { Family, HostFacts, RouteAnswer } from '../host/host-facts.js';
import { familyOf } from '../host/ip-address.js';
import { readHostFacts } from '../host/read-host-facts.js';
import { addressesOf, type NameWait, resolveMaster } from '../host/resolve-name.js';
import { routeTo } from '../host/routes.js';
import type { JobShape, RendezvousEndpoint } from '../job/job-shape.js';
import { storeHostQuestion } from '../job/store-role.js';
import type { Settled } from '../options/settle-options.js';
import { type MachineNames, machineNames } from '../torch/store-host-rule.js';
import { settleFamily } from './family.js';

/** The rendezvous endpoint (job-shape.ts), with every address its host resolves to. */
export interface MasterInfo extends RendezvousEndpoint {
  addresses: string[];
}

export interface HostAndNames {
  facts: HostFacts;
  master: MasterInfo | null;
  /** The rendezvous' family (--family, else the master's). */
  family: Family;
  /** The master's addresses of that family (master.addresses holds every one). */
  masterOfFamily: string[];
  /** The kernel's routes to each of them. */
  routesToMaster: RouteAnswer[];
  /** What the hostname resolves to, in getaddrinfo's order, as Gloo and torch's store rule resolve it. */
  hostnameAddresses: string[];
  /** NCCL_COMM_ID's address: ncclSocketGetAddrFromString takes getaddrinfo's first answer. */
  commIdAddress: string | null;
  /** What a --master-addr beside a c10d endpoint resolves to (env/master-network.ts). */
  masterAddrAddresses: string[];
  /** What torch's store rule compares a c10d endpoint of this node with; null where it is not asked. */
  machine: MachineNames | null;
}

/** What the caller has of the answers when a step fails: for explain's report of the failure. */
export interface Progress {
  factsRead?: Promise<HostFacts>;
  master?: MasterInfo | null;
}

export async function readHostAndNames(
  job: JobShape,
  settled: Settled,
  commIdHost: string | null,
  progress: Progress,
  /** The --facts snapshot's read (plan.ts starts it, for NCCL's files too); undefined: read this host. */
  snapshotRead: Promise<HostFacts> | undefined,
  /** How long a master's name that does not resolve yet is retried; undefined: not at all. */
  nameWait?: NameWait,
): Promise<HostAndNames> {
  const { options } = settled;
  const factsRead = snapshotRead ?? readHostFacts();
  // Handled below; this only keeps a failure from counting as unhandled meanwhile.
  factsRead.catch(() => {});
  progress.factsRead = factsRead;
  // A replay resolves each name as the snapshot's host did (SPEC: never on this machine); a
  // snapshot from before `resolved` was recorded, or a name it did not see, resolves here.
  const replayed = options.facts === null ? null : ((await factsRead).resolved ?? null);
  const fromSnapshot = (name: string) =>
    replayed !== null && Object.hasOwn(replayed, name) ? (replayed[name] as string[]) : null;
  const lookUp = (name: string) =>
    fromSnapshot(name) ??
    (replayed === null ? addressesOf(name) : resolveMaster(name).catch(() => []));
  const masterAddr = otherMasterAddr(job);
  const otherLookups = Promise.all([
    commIdHost === null ? [] : lookUp(commIdHost),
    masterAddr === null ? [] : lookUp(masterAddr),
  ]);
  progress.master = job.master && { ...job.master, addresses: [] };
  const resolved = job.master
    ? (fromSnapshot(job.master.host) ?? (await resolveMaster(job.master.host, nameWait)))
    : [];
  const master = job.master && { ...job.master, addresses: resolved };
  progress.master = master;
  const family = settleFamily(settled, master);
  const masterOfFamily = resolved.filter((address) => familyOf(address) === family);
  const [read, routesToMaster] = await Promise.all([
    factsRead,
    masterOfFamily.length > 0 ? routeTo(masterOfFamily, factsRead, options.facts === null) : [],
  ]);
  const [hostnameAddresses, [commIdAddresses, masterAddrAddresses]] = await Promise.all([
    lookUp(read.hostname),
    otherLookups,
  ]);
  // What this run resolved, carried in the snapshot explain --json prints.
  const facts = {
    ...read,
    resolved: {
      ...(read.hostname === '' ? {} : { [read.hostname]: hostnameAddresses }),
      ...(job.master ? { [job.master.host]: resolved } : {}),
      ...(masterAddr === null ? {} : { [masterAddr]: masterAddrAddresses }),
      ...(commIdHost === null ? {} : { [commIdHost]: commIdAddresses }),
    },
  };
  const question = storeHostQuestion(job, facts, resolved);
  return {
    facts,
    master,
    family,
    masterOfFamily,
    routesToMaster,
    hostnameAddresses,
    commIdAddress: commIdAddresses[0] ?? null,
    masterAddrAddresses,
    machine:
      question === null
        ? null
        : await machineNames(question.endpoint, facts.hostname, hostnameAddresses),
  };
}
