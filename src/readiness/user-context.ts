/**
 * Where the job runs, so that a finding's fix is said in the user's own
 * terms: a Kubernetes pod (KUBERNETES_SERVICE_HOST, which the kubelet sets in
 * every container), a Docker container (/.dockerenv; docker run or compose,
 * which the container cannot tell apart), a Podman one (/run/.containerenv),
 * a Slurm job (SLURM_JOB_ID). None of them: a plain host.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { UserContext } from './node-readiness.js';

export function readUserContexts(
  env: Readonly<Record<string, string | undefined>>,
  root: string,
): UserContext[] {
  const contexts: UserContext[] = [];
  // Kubernetes first: its pods may run on Docker, which leaves /.dockerenv too.
  if (env.KUBERNETES_SERVICE_HOST !== undefined) contexts.push('kubernetes');
  else if (existsSync(join(root, '/.dockerenv'))) contexts.push('docker');
  else if (existsSync(join(root, '/run/.containerenv'))) contexts.push('podman');
  if (env.SLURM_JOB_ID !== undefined) contexts.push('slurm');
  return contexts;
}

/** A fix said for each context; `host` where none applies. */
export type FixByContext = Record<UserContext | 'host', string>;

/** The fixes for the contexts the job runs in, one after another. */
export function fixFor(contexts: readonly UserContext[], fixes: FixByContext): string {
  const said = contexts.map((context) => fixes[context]);
  return (said.length === 0 ? [fixes.host] : said).join('; ');
}
