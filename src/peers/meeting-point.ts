/**
 * Where the nodes of a job meet for `--verify peers` and the `agree` round,
 * computed once for both: the probe port, the job's token, the address the
 * nodes dial (the master's name as torch's store clients resolve it),
 * whether this node hosts the registry (torch's own store-host rule,
 * store-role.ts), and how the registry starts.
 *
 * The probe port is the rendezvous port itself (SPEC --probe-port): the
 * check runs before torchrun, so on the store host the port is free for
 * the registry until torchrun binds it, and it is this job's by
 * construction. No port beside it is taken on any host, so two jobs on
 * adjacent master ports (29500, 29501), or overlapping on a node with the
 * default one, meet nothing of each other's that torch would not meet
 * itself; and a firewall that lets torch's rendezvous through lets the
 * probe through. The mesh uses ephemeral ports, as NCCL does.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.js';
import type { Family } from '../host/host-facts.js';
import { familyOf } from '../host/ip-address.js';
import type { JobShape, RendezvousEndpoint } from '../job/job-shape.js';
import type { StoreRole } from '../job/store-role.js';
import { mungeSocketIn, type SlurmCredential, type SlurmMunged } from '../membership/munge.js';
import { jobToken } from '../membership/token.js';
import { type ProbeService, startProbeService } from '../probe/service.js';
import type { Endpoint } from '../reach/endpoint.js';
import { classifySocketError, type ReachFailure } from '../reach/reach-error.js';
import type { Round } from '../registry/entry.js';
import { checkRegistryBound, type Registry } from '../registry/registry.js';

export interface MeetingPoint {
  master: RendezvousEndpoint;
  port: number;
  token: string;
  /** What the nodes dial: the first of the family among the master's addresses, as torch's clients do. */
  target: Endpoint;
  /** This node hosts torch's store, and so the registry. */
  hostsRegistry: boolean;
  /** torch only guessed that (c10d): a taken port makes this node a client instead. */
  clientIfTaken: boolean;
  /** The rendezvous' family: what the master's name is resolved in, and --peers with it. */
  family: Family;
  /** What the registry binds: every address, as torch's store does. */
  wildcard: string;
  /** How a node proves it belongs to the job: the public token, or a shared secret's. */
  membership: { kind: 'token' } | { kind: 'secret'; file: string };
  /**
   * Under Slurm: every node also proves its uid with a MUNGE credential, made
   * by munged at `socket` (Slurm's own: slurm.conf's AuthInfo; null for
   * munge's default); null outside Slurm (membership/munge.ts).
   */
  munge: SlurmMunged | null;
}

/**
 * The meeting point of a --verify peers job, computed once by the plan and
 * used by both rounds (`agree`'s publish and the peers registration); null
 * where the nodes have nobody to meet (one node, or a standalone job,
 * without a master). A multi-node job without a master cannot meet: exit 78.
 */
export async function meetingPoint(input: {
  job: JobShape;
  /** --probe-port; null: the rendezvous port (SPEC --probe-port). */
  probePort: number | null;
  masterAddresses: readonly string[];
  /** The rendezvous' family. */
  family: Family;
  /** This node's part in torch's store, as the plan decided it (store-role.ts); null without a master. */
  role: StoreRole | null;
  /** --probe-secret-file. */
  secretFile: string | null;
}): Promise<MeetingPoint | null> {
  const { job, family, secretFile } = input;
  const master = job.master;
  if (master === null) {
    if (job.standalone || job.nnodes.max === 1) return null;
    throw new ConfigError(
      '--verify peers needs the master: the nodes meet through its probe service; give --master-addr (or run under Slurm)',
    );
  }
  const { role } = input;
  if (role === null) throw new Error('a job with a master has a store role');
  const port = input.probePort ?? master.port;
  checkRegistryBound(job);
  const secret = secretFile === null ? null : await readSecret(secretFile);
  const address = input.masterAddresses.find((candidate) => familyOf(candidate) === family);
  if (address === undefined) throw new Error(`the master has no ${family} address`);
  return {
    master,
    port,
    token: jobToken({ master, jobId: job.jobId, probePort: port, secret }),
    target: { address, port },
    hostsRegistry: role.role === 'store host',
    clientIfTaken: role.role === 'store host' && role.clientIfTaken !== null,
    family,
    wildcard: family === 'ipv6' ? '::' : '0.0.0.0',
    membership: secretFile === null ? { kind: 'token' } : { kind: 'secret', file: secretFile },
    munge: job.munge === null ? null : { socket: await mungeSocketIn(job.munge.conf) },
  };
}

/** The secret's bytes, surrounding whitespace aside (a file written with echo ends in a newline). */
async function readSecret(file: string): Promise<Buffer> {
  let text: Buffer;
  try {
    text = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ConfigError(
      `--probe-secret-file ${file} cannot be read (${code}): every node of the job needs the same secret file`,
    );
  }
  const secret = Buffer.from(text.toString('latin1').trim(), 'latin1');
  if (secret.length === 0) {
    throw new ConfigError(
      `--probe-secret-file ${file} is empty: the secret must be the same non-empty bytes on every node`,
    );
  }
  return secret;
}

/**
 * SPEC "Real jobs": the log says how membership is decided: under Slurm by
 * a MUNGE credential where this node's munged made one (the registry's own
 * decides for the job: membership/munge.ts), and by the shared secret where one is
 * given; `munge` is null outside Slurm. A warning where munge failed here.
 */
export function membershipLine(
  meeting: MeetingPoint,
  munge: SlurmCredential | null,
): { level: 'info' | 'warn'; line: string } {
  const secret =
    meeting.membership.kind === 'secret'
      ? `the job's shared secret (${meeting.membership.file})`
      : null;
  if (munge?.credential != null) {
    const where = munge.socket === null ? "munged's default socket" : `munged at ${munge.socket}`;
    return {
      level: 'info',
      line: `probe membership: every node proves ${secret === null ? '' : `${secret} and `}with a MUNGE credential (${where}) that it runs as uid ${process.getuid?.() ?? 0}; a process ${secret === null ? 'of another user' : 'without the secret or of another user'} is no member`,
    };
  }
  const failed =
    munge === null
      ? ''
      : ` (munge made no credential on this node: ${munge.failure}; a master whose munged answers refuses it)`;
  if (secret !== null) {
    return {
      level: munge === null ? 'info' : 'warn',
      line: `probe membership: every node proves ${secret}; a process without it is no member${failed}`,
    };
  }
  return {
    level: munge === null ? 'info' : 'warn',
    line: `probe membership by token only${failed}: it is derived from the master's address and port and the job id, which are not secret, so it tells jobs apart but does not keep strangers out; --probe-secret-file makes it an authenticator`,
  };
}

/**
 * Connections that have not sent their request yet, at the registry: past
 * this, strangers push the oldest silent one out. A whole job may arrive
 * in one burst, so never fewer than its nodes.
 */
const REGISTRY_PENDING = 256;
/** Descriptors kept for everything but held registrations: pending ones, the mesh's dials, Node's own. */
const DESCRIPTOR_RESERVE = 512;

export type RegistryStart<R extends Round> =
  | { kind: 'started'; service: ProbeService; registry: Registry<R> }
  /** Another agent of the job holds the port, and torch makes this node its client. */
  | { kind: 'client' }
  | { kind: 'failed'; failure: ReachFailure };

/** The registry's service at the meeting point, on the store host. */
export async function startRegistry<R extends Round>(
  meeting: MeetingPoint,
  registry: Registry<R>,
  nodes: number,
  extra: Pick<Parameters<typeof startProbeService>[0], 'onHello' | 'onForeignVersion'> = {},
): Promise<RegistryStart<R>> {
  try {
    const service = await startProbeService({
      host: meeting.wildcard,
      port: meeting.port,
      token: meeting.token,
      maxPending: Math.max(REGISTRY_PENDING, nodes),
      registry,
      ...extra,
    });
    return { kind: 'started', service, registry };
  } catch (error) {
    registry.close();
    const failure = classifySocketError(error);
    // torch would become a client of whoever holds the port (store-role.ts clientIfTaken).
    if (failure.error === 'port in use' && meeting.clientIfTaken) return { kind: 'client' };
    return { kind: 'failed', failure };
  }
}

/**
 * How many registrations the registry holds open: the soft descriptor
 * limit less a reserve. Node raises its own soft limit to the hard one at
 * start (node.cc, PlatformInit), so this is the hard limit unless the
 * process was started under a lower one (`ulimit -n 1024` sets both); past
 * it, nodes are told to ask again instead.
 */
export async function holdCapacity(): Promise<number> {
  const limits = await readFile('/proc/self/limits', 'utf8').catch(() => '');
  const line = limits.split('\n').find((entry) => entry.startsWith('Max open files'));
  const soft = Number(line?.split(/\s+/)[3]);
  const limit = Number.isFinite(soft) && soft > 0 ? soft : 1_024;
  return Math.max(0, limit - DESCRIPTOR_RESERVE);
}
