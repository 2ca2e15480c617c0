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
 * Through munge(1) and unmunge(1), one fork+exec each (about 4 ms here):
 * libmunge has no Node binding, and its client protocol (munge's
 * src/libcommon/m_msg.c) is munged's own to change. munged's replay cache
 * refuses a credential decoded twice (EMUNGE_CRED_REPLAYED, 17), while a
 * node asks again with the same bytes (join.ts): the registry remembers a
 * credential it accepted, and from where (admission.ts).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { JobShape } from '../job/job-shape.js';
import type { Register } from './protocol.js';

/** munge and unmunge answer from a local socket in milliseconds; slower is a wedged munged. */
const MUNGE_TIMEOUT_MS = 5_000;
/** Slurm's own default location of slurm.conf (Debian's slurm-wlm, and Slurm's configure default). */
const DEFAULT_SLURM_CONF = '/etc/slurm/slurm.conf';
/** Beyond munged's default TTL (300 s) when a check waits longer; munged caps it (3600 s by default). */
const TTL_SLACK_S = 60;

/**
 * The munged socket Slurm itself uses: slurm.conf's `AuthInfo=socket=PATH`
 * (Slurm's auth/munge plugin, slurm_auth_opts_to_socket), at $SLURM_CONF
 * or Slurm's default path; null for munge's own default
 * (/run/munge/munge.socket.2). munge has no variable for it, only --socket.
 */
export async function slurmMungeSocket(env: NodeJS.ProcessEnv): Promise<string | null> {
  const conf = await readFile(env.SLURM_CONF || DEFAULT_SLURM_CONF, 'utf8').catch(() => '');
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
export async function mungeEncode(
  payload: string,
  socket: string | null,
  ttlS: number,
): Promise<Encoded> {
  const ttl = String(Math.ceil(ttlS) + TTL_SLACK_S);
  const run = await runMunge('munge', ['--string', payload, '--ttl', ttl, ...socketArgs(socket)]);
  if (run.code !== 0) return { ok: false, reason: run.error };
  return { ok: true, credential: run.stdout.trim() };
}

export type Decoded =
  | { ok: true; uid: number; payload: string }
  /** munged refused it (status: munge's error number, 15 expired, 17 replayed), or could not be asked. */
  | { ok: false; status: number | null; reason: string };

/** unmunge's verdict on a credential: numeric metadata (-N), so that no name is looked up. */
export async function mungeDecode(credential: string, socket: string | null): Promise<Decoded> {
  const run = await runMunge(
    'unmunge',
    ['--numeric', '--keys', 'STATUS UID', ...socketArgs(socket)],
    `${credential}\n`,
  );
  if (run.code !== 0) {
    const reason = run.said || (run.code !== null && CREDENTIAL_ERRORS[run.code]) || run.error;
    return { ok: false, status: run.code, reason };
  }
  // Metadata lines, a blank line, then the payload as it was encoded.
  const split = run.stdout.indexOf('\n\n');
  const metadata = split === -1 ? run.stdout : run.stdout.slice(0, split);
  const uid = Number(metadata.match(/^UID:\s+(\d+)$/m)?.[1] ?? Number.NaN);
  if (!Number.isInteger(uid)) return { ok: false, status: null, reason: 'unmunge printed no UID' };
  return { ok: true, uid, payload: split === -1 ? '' : run.stdout.slice(split + 2) };
}

/**
 * munge_strerror's words for the verdicts on a credential (munge 0.5.15,
 * src/libmunge/strerror.c), which unmunge reports by its exit status alone
 * (with --numeric, STATUS is the number too, and nothing on stderr).
 */
const CREDENTIAL_ERRORS: Record<number, string> = {
  8: 'Invalid credential format',
  9: 'Invalid credential version',
  13: 'Unrecognized security realm',
  14: 'Invalid credential',
  15: 'Expired credential',
  16: 'Rewound credential',
  17: 'Replayed credential',
  18: 'Unauthorized credential',
};

function socketArgs(socket: string | null): string[] {
  return socket === null ? [] : ['--socket', socket];
}

interface MungeRun {
  /** The exit status (munge's error number); null when it could not run or was stopped. */
  code: number | null;
  stdout: string;
  /** Its own last line on stderr ("Failed to access ...: Did you start munged?"), or ''. */
  said: string;
  /** What went wrong, in words: what it said, or why it could not say. */
  error: string;
}

function runMunge(program: string, args: string[], input?: string): Promise<MungeRun> {
  return new Promise((resolve) => {
    const child = execFile(
      program,
      args,
      { timeout: MUNGE_TIMEOUT_MS, maxBuffer: 64 * 1024 },
      (error, stdout, stderr) => {
        const code = (error as NodeJS.ErrnoException | null)?.code;
        const said = (stderr.trim().split('\n').at(-1) ?? '').replace(/^\S+: Error: /, '');
        const failed =
          code === 'ENOENT'
            ? `${program} is not installed`
            : error?.killed
              ? `${program} timed out`
              : `${program} exited ${code}`;
        resolve({
          code: error === null ? 0 : typeof code === 'number' ? code : null,
          stdout,
          said,
          error: said || failed,
        });
      },
    );
    child.stdin?.on('error', () => {});
    child.stdin?.end(input ?? '');
  });
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
  job: Pick<JobShape, 'cluster'>,
  claim: Omit<Register, 'v' | 'munge'>,
  validS: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SlurmCredential | null> {
  if (job.cluster !== 'slurm') return null;
  const socket = await slurmMungeSocket(env);
  const encoded = await mungeEncode(credentialPayload(claim), socket, validS);
  return encoded.ok
    ? { socket, credential: encoded.credential, failure: null }
    : { socket, credential: null, failure: encoded.reason };
}
