/**
 * The job token in every probe handshake, so that two jobs whose probes
 * share a port on the same nodes (a re-queued job overlapping its
 * predecessor, two users picking 29501) cannot vouch for each other. Every
 * node of one job derives the same token from what they share: the
 * rendezvous endpoint, the job's id (SLURM_JOB_ID) and the probe port,
 * without any exchange. Not the peer list: a node need not have one, and
 * the registry, not the token, says who takes part.
 *
 * Those parts are public, so anyone who knows the job can compute the
 * token: it tells jobs apart, it does not keep strangers out. Given a
 * secret that every node of the job can read (--probe-secret-file, a
 * Kubernetes Secret), the token is an HMAC-SHA256 of the same parts under
 * it, which a process without the secret cannot compute.
 */
import { createHash, createHmac } from 'node:crypto';
import type { RendezvousEndpoint } from '../job/job-shape.js';

export function jobToken(parts: {
  master: Pick<RendezvousEndpoint, 'host' | 'port'> | null;
  jobId: string | null;
  probePort: number;
  /** The job's shared secret; null: the public token. */
  secret?: Buffer | null;
}): string {
  const canonical = JSON.stringify([
    parts.master ? `${parts.master.host}:${parts.master.port}` : null,
    parts.jobId,
    parts.probePort,
  ]);
  const digest = parts.secret == null ? createHash('sha256') : createHmac('sha256', parts.secret);
  return digest.update(canonical).digest('hex').slice(0, 32);
}
