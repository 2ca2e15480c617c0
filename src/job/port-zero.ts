/**
 * A c10d rendezvous at port 0 (`--rdzv-endpoint=localhost:0`, torch's own
 * recipe for several jobs on one machine, torchtitan's default): the node
 * that hosts the store binds a port the kernel picks, and its agent tells its
 * workers that port (seen in the lab on torch 1.13, 2.6 and 2.14). No other
 * node can learn it, so the job is this host's alone: more than one node,
 * or an endpoint that is not this host, cannot work, and there is nothing to
 * check beyond `local`. A static rendezvous at port 0 is another matter
 * (rendezvous-master.ts: its workers are told port 0).
 */
import { badValue, type ConfigError, type UsageError } from '../errors.js';
import type { JobShape } from './job-shape.js';

/** The job's rendezvous is at a port torch picks. */
export function picksPort(job: Pick<JobShape, 'master'>): boolean {
  return job.master?.port === 0;
}

/** More than one node at port 0 (readJobShape): refused where the endpoint was given. */
export function portZeroWithNodes(job: JobShape): UsageError | ConfigError | null {
  const { master, nnodes } = job;
  if (master === null || master.port !== 0 || nnodes.max <= 1) return null;
  return badValue(
    master.portOrigin,
    `${master.host}:0`,
    `port 0 is a port torch picks on the node that hosts the store, which the other nodes cannot learn, and the job has ${nnodes.max === nnodes.min ? nnodes.max : `up to ${nnodes.max}`} nodes (${nnodes.origin.name}); give the rendezvous a fixed port, e.g. ${master.host}:29400`,
  );
}

/** Port 0 at an endpoint that is not this host, once the host is known (the plan). */
export function portZeroElsewhere(
  job: JobShape,
  singleNode: boolean,
): UsageError | ConfigError | null {
  const { master } = job;
  if (master === null || master.port !== 0 || singleNode) return null;
  return badValue(
    master.portOrigin,
    `${master.host}:0`,
    `port 0 is a port torch picks on the node that hosts the store, and ${master.host} is not this host, whose agent would dial port 0 there; use localhost:0 on the one node, or a fixed port`,
  );
}
