/**
 * MUNGE credentials for the probe's membership under Slurm (SPEC "Real
 * jobs"): every Slurm cluster runs munged on every node with one key
 * (Slurm's own auth/munge needs it), so a node can prove which user it runs
 * as without any secret of nccl-run's. A node inside a Slurm job sends a
 * credential with its registration whose payload binds it to that
 * registration (the job's token, the node's name, rank, claimed address,
 * port and proof key); the registry decodes it with its own munged and
 * admits only the uid it runs as itself, an unexpired credential and a
 * matching payload.
 *
 * A node encodes its one credential with munge(1) (a fork and an exec, 5-8
 * ms here, once per check); the registry, which decodes one per node,
 * asks munged over its socket (munge-decode.ts). munged's replay cache
 * refuses a credential decoded twice (EMUNGE_CRED_REPLAYED, 17), while a
 * node asks again with the same bytes (peers/join.ts): the registry remembers a
 * credential it accepted, and from where (admission.ts).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Register } from '../probe/protocol.js';

/** munge answers from a local socket in milliseconds; slower is a wedged munged. */
const MUNGE_TIMEOUT_MS = 5_000;
/** Beyond munged's default TTL (300 s) when a check waits longer; munged caps it (3600 s by default). */
const TTL_SLACK_S = 60;

/**
 * The munged socket the cluster itself uses, from its configuration file
 * (ClusterInfo.munge): slurm.conf's `AuthInfo=socket=PATH` (Slurm's
 * auth/munge plugin, slurm_auth_opts_to_socket); null for munge's own
 * default (/run/munge/munge.socket.2). munge has no variable for it, only
 * --socket.
 */
export async function mungeSocketIn(slurmConf: string): Promise<string | null> {
  const conf = await readFile(slurmConf, 'utf8').catch(() => '');
  for (const line of conf.split('\n')) {
    const authInfo = line.replace(/#.*/, '').match(/^\s*AuthInfo\s*=\s*(\S+)/i)?.[1];
    if (authInfo === undefined) continue;
    const socket = authInfo
      .split(',')
      .map((option) => option.match(/^socket=(.+)$/i)?.[1])
      .find((path) => path !== undefined);
    if (socket !== undefined) return socket;
  }
  return null;
}

/** What a credential binds a registration to: everything in it but the credential. */
export function credentialPayload(request: Omit<Register, 'v' | 'munge'>): string {
  return JSON.stringify([
    'nccl-run probe register',
    request.token,
    request.node.name,
    request.node.rank,
    request.address,
    request.port,
    request.proofKey,
  ]);
}

export type Encoded = { ok: true; credential: string } | { ok: false; reason: string };

/** A credential of this process's uid around `payload`, valid at least `ttlS` seconds where munged allows it. */
export function mungeEncode(
  payload: string,
  socket: string | null,
  ttlS: number,
): Promise<Encoded> {
  const ttl = String(Math.ceil(ttlS) + TTL_SLACK_S);
  const args = [
    '--string',
    payload,
    '--ttl',
    ttl,
    ...(socket === null ? [] : ['--socket', socket]),
  ];
  return new Promise((resolve) => {
    const child = execFile(
      'munge',
      args,
      { timeout: MUNGE_TIMEOUT_MS, maxBuffer: 64 * 1024 },
      (error, stdout, stderr) => {
        if (error === null) return resolve({ ok: true, credential: stdout.trim() });
        const code = (error as NodeJS.ErrnoException).code;
        // munge's own last words ("Failed to access ...: Did you start munged?"), else why it said none.
        const said = (stderr.trim().split('\n').at(-1) ?? '').replace(/^munge: Error: /, '');
        const why =
          code === 'ENOENT'
            ? 'munge is not installed'
            : error.killed
              ? `munge did not answer in ${MUNGE_TIMEOUT_MS / 1_000} s`
              : `munge exited ${code}`;
        resolve({ ok: false, reason: said || why });
      },
    );
    child.stdin?.end();
  });
}

/** The munged a Slurm job's nodes use (mungeSocketIn): its socket, null for munge's own default. */
export interface SlurmMunged {
  socket: string | null;
}

/** What a node under Slurm sends: its credential, or why munge made none. */
export interface SlurmCredential {
  socket: string | null;
  credential: string | null;
  /** Why munge made no credential; null when it did. */
  failure: string | null;
}

/** Under Slurm (SPEC "Real jobs"), this node's credential for its registration; null outside Slurm. */
export async function slurmCredential(
  munge: SlurmMunged | null,
  claim: Omit<Register, 'v' | 'munge'>,
  validS: number,
): Promise<SlurmCredential | null> {
  if (munge === null) return null;
  const { socket } = munge;
  const encoded = await mungeEncode(credentialPayload(claim), socket, validS);
  return encoded.ok
    ? { socket, credential: encoded.credential, failure: null }
    : { socket, credential: null, failure: encoded.reason };
}
