/**
 * The job token in every probe handshake, so that two jobs whose probes
 * share a port on the same nodes (a re-queued job overlapping its
 * predecessor, two users picking 29501) cannot vouch for each other. Every
 * node of one job derives the same token from what they share: the
 * rendezvous endpoint, the job's id (SLURM_JOB_ID) and the probe port,
 * without any exchange. Not the peer list: a node need not have one, and
 * the registry, not the token, says who takes part.
 */
import { createHash } from 'node:crypto';
import type { RendezvousEndpoint } from '../job/job-shape.js';

export function jobToken(parts: {
  master: Pick<RendezvousEndpoint, 'host' | 'port'> | null;
  jobId: string | null;
  probePort: number;
}): string {
  const canonical = JSON.stringify([
    parts.master ? `${parts.master.host}:${parts.master.port}` : null,
    parts.jobId,
    parts.probePort,
  ]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}
